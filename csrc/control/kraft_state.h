/* State shared by Kraft's step controller (adaptive.c) and his estimators (estimators.c). Internal to control/. */
#ifndef COSIM_KRAFT_STATE_H
#define COSIM_KRAFT_STATE_H

#include "control/adaptive.h"
#include "coupling/approx.h"

#define KH CS_MAXHIST           /* u history for SDN(κ+2): κ_max + 3 <= 8 samples */

typedef struct kraft_state {
    cs_kraft_opts o;
    int *state_index, *state_group, *in_index;  /* copies */
    double *state_atol, *in_atol;
    double t0, t_end;
    int nsub;
    cs_unit **units;
    cs_coupling *coupling;
    int *st_unit, *st_local;    /* monitored state -> unit, local index */
    unsigned char *unit_mon;    /* unit has monitored states (comparative run) */
    void **cur;                 /* per unit: snapshot of the actual step's state at T_{N+1} */
    const cs_input **cmp;       /* comparative inputs */
    cs_input *cmp_start;        /* per unit: the start-up comparative inputs (exLE/exMD before κ+2 points exist) */
    double *cmp_start_c;        /* their coefficients, (CS_MAXDEG + 1) x nu per unit */
    double *xact, *xcmp, *e, *w; /* nstate (or nin) scratch */
    /* controller state */
    double H;                   /* next step size */
    double Hprop;               /* the step size propose asked for (p->H = T1 − T may round above H_min) */
    int kappa;                  /* controller's degree κ */
    int kstep;                  /* degree of the step in progress */
    int n_fail, n_succ, initial;
    int npts;                   /* accepted macro points including T_0 */
    double hT[KH];              /* accepted times, newest first */
    double *hu;                 /* KH x nin monitored u, newest first */
    /* candidate of the step in progress (set by the estimator) */
    double T1c, *ucand;
    double gnorm[3];            /* WRMS norms of the groups pos, vel, u of the last estimate */
    int gused[3];
    int tested;                 /* the last estimate is a real test (0: not enough history) */
    long startup_tests;         /* steps tested with the start-up comparative input (û = u_{N+1}) */
    double eps_last;
    /* records (grown by doubling) */
    long n, cap, nrej, caprej, comparative_steps;
    double *rT, *rH, *reps, *rTrej, *rHrej;
    int *rk;
    int hmin_failed;
    long rec_lost;              /* steps not recorded (out of memory) */
    long conv_fail;             /* corConvFail retries (kraft2021 §19) */
} kraft_state;

int cs_kraft_estimator_create(kraft_state *ks, cs_estimator **out, cs_err *err);

#endif
