/* The pre-step coupling's shared core (coupling/prestep*.c, internal to coupling/): its state, the identified-Jacobian
 * sources as a small ops table (exact/given, RLS, MOESP: prestep_ij.c), the continuous (prestep_continuous.c) and
 * the discrete (prestep_discrete.c) variant's Steps 1-3, and the pieces both variants use (prestep_core.c). The
 * coupling ops, creation and the log are in prestep.c. Notation: see prestep.c. */
#ifndef COSIM_PRESTEP_CORE_H
#define COSIM_PRESTEP_CORE_H

#include "coupling/prestep.h"
#include "sysid/gilbert.h"
#include "sysid/moesp.h"
#include "sysid/rls.h"

#define NC (CS_MAXDEG + 1)

typedef struct cs_ps_ij_ops cs_ps_ij_ops;

/* mutable per-step state, one block (snapshots copy it whole) */
typedef struct ps_state {
    double *y, *yprev;        /* y^k, y^{k-1} (n) */
    double *uc0, *uc1;        /* input of the last accepted step: u(t) = uc0 + uc1 (t - T)/H (m) */
    double *uend_prev;        /* u^{k-1}: end value of the step before (m) */
    double *nc0, *nc1;        /* input built in this step's predict (m) */
    double *delta;            /* delta^k (n) */
    double *eps_prev;         /* eps^{k-1} (m, discrete EDE) */
    double *ymin, *ymax;      /* running ranges for eps_SI (n) */
    double *scal;             /* k, Hprev, nlog */
    double *yint, *ecor, *icnt; /* intermediate correction only: int y dt over the last step (n), eps_cor (m),
                                 * counts (traced steps, macro-point fallback steps) */
    size_t size;
} ps_state;

typedef struct prestep {
    const cs_network *net;
    const cs_ps_ij_ops *ij;   /* where the IJs come from (prestep_ij.c) */
    cs_prestep_spec spec;
    int n, m, nsub;
    int *yo, *uo;             /* offsets (copies of net->yoff, uoff) */
    double *L;                /* m x n */
    double *Sy, *Su, *Sd;     /* global block-diagonal IJs (n x n, n x m, n x m) */
    double *G;                /* given IJs copied (for the block-diagonal assembly): per unit blocks */
    /* continuous matrices for step size Hc */
    double Hc;
    double *Mc, *M, *cvec, *N; /* n x n, n x n, n, n x 2m */
    double *Phi1, *Gam1;       /* EDE propagator: n x n, 2 blocks n x 2m */
    double *Phi2, *Gam2;       /* extrapolation: n x n, n */
    double *phA, *phB, *phCD, *Ap; /* per unit, offsets pa/pb */
    int *pa, *pb;              /* offsets of unit i's ni x ni and ni x mi blocks */
    int *rank;                 /* per unit rank of the Step-3 matrix */
    int given_pinv_ready;      /* discrete given IJs: pinv computed once */
    /* RLS */
    cs_rls **rls;
    double *rls_a, *rls_b;     /* scratch: params of one unit */
    double **rls_snap;         /* per unit state vectors for the snapshot in flight */
    int nparams;
    /* MOESP windows (one per unit), their IJs per unit [n, Sy, Su^-, Su^+] (nparams), conversion workspace, and
     * the last step index k whose sample (u^k, y^k) was pushed (outside the snapshot: a sample depends only on
     * accepted data, so a restored step is not pushed twice) */
    cs_gilbert **gil;          /* RLS with n_a or n_b > 1: one Gilbert realization per unit */
    double *gij;               /* per unit IJ scratch: Sy, Su^-, Su^+ (maxn^2 + 2 maxn maxm) */
    cs_moesp **moesp;
    int *mcfg;                 /* per unit: order */
    double *mpar, *ijw;
    long moesp_k;
    /* workspace */
    double *work, *tmp, *w1, *w2, *sb, *yt, *yh, *v1, *v2, *v3;
    size_t nwork;
    int *ipiv;
    ps_state st;
    double *stbuf;
    /* log */
    long logcap;
    unsigned char *lphase;
    double *leps, *lpar, *ldel, *lu;
    int *lrank;
    /* inputs */
    cs_input *in;
    double *incoef;
    double T, H;
    const cs_unit_access *units; /* for the traces of the intermediate-value correction (may be NULL) */
    double *lecor;            /* log of eps_cor (logcap x m), intermediate correction only */
} prestep;

/* Identified-Jacobian source (spec sections 6-7): every op may be NULL (the given IJs need none). */
struct cs_ps_ij_ops {
    /* Identify with (u^k, y^k) of step k into the global Sy, Su, Sd; eps_SI,global into *eps. Returns 0 when the
     * IJs are usable, 1 when the identification failed, 2 while it has too few samples (learning phase). */
    int (*identify)(prestep *p, const double *uk, long k, double *eps);
    void (*recover)(prestep *p);                       /* after a failed identification */
    void (*initial_sample)(prestep *p, const double *u0); /* the initial outputs y^0 with u^0 = L y^0 + r */
    void (*log_params)(const prestep *p, double *par);  /* the identified parameters (nparams) into the log */
};
/* The ops of CS_PRESTEP_IJ_* (NULL for an unknown code). */
const cs_ps_ij_ops *cs_ps_ij_source(int ij_source);

/* Shared: Mc = I - Sd L and A = Sy + Su L (n x n each). */
void cs_ps_global_mats(prestep *p, double *Mc, double *A);
/* Step 3 for unit i with the pseudo-inverse in p->Ap: s = s* + A^+ (rhs - A s*). x: unknown (mi), rhs (ni),
 * target (mi). */
void cs_ps_solve_step3(const prestep *p, int i, const double *A, const double *rhs, const double *target, double *x,
                       double *scr);

/* Continuous variant: the matrices for step size H (once per step size), and Steps 1-3 of one step (H the step,
 * Hnom its nominal size or 0, Hp the last step's length, k the steps accepted): delta, yhat and, in an MBC or MOD
 * phase, the input c0 + c1 s; *ok = 0 when the input is not finite. */
int cs_ps_prepare_continuous(prestep *p, double H, cs_err *err);
int cs_ps_continuous_predict(prestep *p, double H, double Hnom, double Hp, long k, int phase, double *c0, double *c1,
                             int *ok, cs_err *err);
/* Discrete variant (HOLD inputs): Steps 1-3 from u^k when the IJs are usable (ij_ok) and k >= 1; c1 = 0. */
int cs_ps_discrete_predict(prestep *p, const double *uk, long k, int ij_ok, int phase, double *c0, double *c1, int *ok,
                           cs_err *err);

#endif
