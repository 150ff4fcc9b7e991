/* The relative divergence criterion on a run's records (cosim.metrics.divergence, which documents it; simulate
 * applies it after every run): a signal diverged when max |s| after the early window exceeds `limit` times its early
 * amplitude, and it is still growing at the end. One pass over the records per window bound, no allocation. */
#ifndef COSIM_ANALYSIS_GROWTH_H
#define COSIM_ANALYSIS_GROWTH_H

/* The criterion's constants (cosim/metrics.py defines them and passes them in). */
typedef struct cs_growth_rule {
    double limit;        /* growth factor > 1 (finite) */
    double window;       /* early / late window as a fraction of the time span, in (0, 0.5] */
    double floor;        /* early amplitudes below floor * (largest finite early amplitude of the group) use that */
    double rest;         /* early amplitude <= rest * peak: at rest, not judged */
    double growing;      /* last window max > growing * previous window max: still growing */
    long min_points;     /* points the early window (and each late window) needs */
} cs_growth_rule;

/* The worst signal of one group. */
typedef struct cs_growth_verdict {
    int column;          /* -1: no signal of the group exceeds the limit */
    double factor;       /* peak / reference (inf: not finite) */
    double t_bad;        /* first time its value was not finite or exceeded limit * reference */
    double ref, peak;
} cs_growth_verdict;

/* t: n increasing finite times; V: n x m with element strides rs (rows), cs (columns). work: 5 m doubles.
 * Returns 0 when the windows are too short to judge (verdict column -1), 1 when judged. */
int cs_growth_worst(const double *t, long n, const double *V, long rs, long cs, int m, const cs_growth_rule *rule,
                    double *work, cs_growth_verdict *out);

#endif
