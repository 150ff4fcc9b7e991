/* Forced into every translation unit of the wheel builds (packaging/build_wheels.sh: CPPFLAGS="-include ...";
 * CFLAGS would replace Python's own flags, -DNDEBUG among them). Binds hypot to its GLIBC_2.2.5 version instead
 * of glibc 2.35's, the one symbol that kept the wheels from manylinux_2_34 (RHEL/Rocky/Alma 9). The bundled
 * libgfortran needs 2.34 itself, so a lower tag takes another build machine. make wheel-check's golden test shows
 * that the results stay bit-identical. */
__asm__(".symver hypot,hypot@GLIBC_2.2.5");
