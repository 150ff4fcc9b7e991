"""Containment of FMU and SSP archives: what a ``.fmu`` or ``.ssp`` file may make cosim read, write or load.

An archive comes from someone else. Three rules (docs/fmu.md "Containment"):

* extraction: every member lands below the target directory (no ``../`` or absolute member names), and the
  members' declared sizes together stay below a limit (``max_unpacked``: a zip bomb of 1 MiB that expands to 1 GiB
  is refused before anything is written; :class:`zipfile.ZipFile` never writes more than a member declares);
* references: a path named inside the archive (an FMU's ``modelIdentifier``, an SSP component's or parameter
  binding's ``source``) resolves, after following symbolic links, to a file inside the unpacked archive; URIs with
  a scheme (``file://``, ``http:``) and absolute paths are refused;
* XML: parsed with :mod:`defusedxml` (no entity expansion, no external entities or DTDs fetched), so a
  modelDescription.xml or SystemStructure.ssd cannot expand to gigabytes ("billion laughs") or read local files.
"""
from __future__ import annotations

import os
import pathlib
import urllib.parse
import zipfile

from . import _check

#: default limit of the unpacked size of one archive (bytes): far above real FMUs and SSPs (tens of MiB), far below
#: what would fill a disk; ``cosim.FMU(..., max_unpacked=...)`` and ``from_ssp(..., max_unpacked=...)`` change it
MAX_UNPACKED = 1 << 30


def check_limit(max_unpacked, name="max_unpacked"):
    """``max_unpacked`` validated: a positive int (bytes); None gives :data:`MAX_UNPACKED`."""
    if max_unpacked is None:
        return MAX_UNPACKED
    return _check.integer(max_unpacked, name, minimum=1)


def extract(path, dest, max_unpacked, what="archive"):
    """Unpack the zip archive ``path`` into the directory ``dest`` under the rules above (ValueError naming
    ``path`` otherwise); returns the unpacked size in bytes."""
    root = os.path.realpath(dest)
    try:
        with zipfile.ZipFile(path) as z:
            infos = z.infolist()
            total = 0
            for info in infos:
                target = os.path.realpath(os.path.join(root, info.filename))
                if not target.startswith(root + os.sep):
                    raise ValueError(f"path: {str(path)!r} holds an unsafe member name {info.filename!r}")
                total += info.file_size
            if total > max_unpacked:
                raise ValueError(f"path: the {what} {str(path)!r} unpacks to {total} bytes, more than the limit of "
                                 f"{max_unpacked} bytes (max_unpacked=; a zip bomb?)")
            z.extractall(root)
            return total
    except zipfile.BadZipFile as e:
        raise ValueError(f"path: {str(path)!r} is not a readable zip archive ({e})") from None


def inside(root, reference, what):
    """The file that ``reference`` (a relative path or relative URI reference, as written in the archive) names
    below the directory ``root``; ValueError naming ``what`` when it leaves ``root`` or is absolute or has a
    scheme."""
    ref = str(reference)
    parsed = urllib.parse.urlsplit(ref)
    if parsed.scheme or parsed.netloc:
        raise ValueError(f"{what}: {ref!r} is a URI with a scheme; only paths inside the archive are allowed")
    rel = urllib.parse.unquote(parsed.path)
    if not rel or "\0" in rel or os.path.isabs(rel) or rel.startswith(("/", "\\")) or (
            len(rel) > 1 and rel[1] == ":"):
        raise ValueError(f"{what}: {ref!r} is not a relative path inside the archive")
    base = os.path.realpath(root)
    target = os.path.realpath(os.path.join(base, rel))
    if not target.startswith(base + os.sep):
        raise ValueError(f"{what}: {ref!r} points outside the archive")
    return pathlib.Path(target)


def plain_name(name, what):
    """``name`` when it is a single file name (no directory part, not ``.``/``..``); ValueError naming ``what``."""
    if not isinstance(name, str) or not name or name in (".", "..") or any(c in name for c in "/\\\0:"):
        raise ValueError(f"{what}: {name!r} is not a plain file name (it must not name a directory or a path)")
    return name


def parse_xml(path, what):
    """The root element of the XML file ``path``, parsed by defusedxml (entity declarations and external
    references refused); ValueError naming ``what`` for bad or dangerous XML."""
    import defusedxml
    import defusedxml.ElementTree as DET
    try:
        return DET.parse(path).getroot()
    except defusedxml.DefusedXmlException as e:
        raise ValueError(f"path: {what} refused: {type(e).__name__} ({e}); entity declarations and external "
                         "references are not allowed") from None
    except DET.ParseError as e:
        raise ValueError(f"path: invalid {what} ({e})") from None
