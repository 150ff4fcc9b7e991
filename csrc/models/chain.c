/* Oscillator chain (kraft2021 §3, thesis Sec. 2.2-2.3): ONE model for a whole chain segment of n point masses, and
 * the zero-state coupling element that evaluates the force of a nonlinear cut element (force/force decomposition).
 *
 * Segment ("chain_segment"): local bodies 1..n, element k (k = 1..n+1) between body k-1 and body k. Element law
 * (2.9):
 *     F_SD,k = c_k Δx + d_k Δv + C_k sgn(Δx)|Δx|^{e_x,k} + D_k sgn(Δv)|Δv|^{e_v,k},  Δx = x_k - x_{k-1}, ...
 * Equations of motion (2.15)/(2.16):  x_i' = v_i,  m_i v_i' = -F_SD,i + F_SD,i+1 + F_EXT,i.
 * Left end: a wall (x_0 = v_0 = 0, element 1 internal; a free end is a wall element with zero parameters) or a cut
 * (F_SD,1 is replaced by the input λ_{L-1}); right end likewise (F_SD,n+1 replaced by the input λ_L).
 * Inputs u = [λ_{L-1} if the left end is cut, λ_L if the right end is cut]; outputs y = [x_1, x_n, v_1, v_n]
 * (the coupling bodies' states, kraft2021 §3.2). No feed-through.
 * External forces F_EXT (2.11)-(2.14), any number per body:
 *     harmonic  ΔF sin(Ω t + φ)
 *     sine      ΔF (sin(Ω t + φ))^A_S             A_S a non-negative integer: integer power (sign kept for odd A_S)
 *     contact   A_C exp(B_C x_i)                   exponent capped at CONTACT_MAX_EXP (overflow-safe, finite force)
 *     impulse   ΔF ½[tanh((t - t_I)/δ_I) - tanh((t - t_I - Δt_I)/δ_I)]
 * State order: interleaved z = [x_1, v_1, x_2, v_2, ..., x_n, v_n] (the thesis stacks [x; v]; interleaving gives the
 * monolithic chain a Jacobian of bandwidth 3, so that a band solver is cheap).
 *
 * params layout (doubles; counts are stored as doubles):
 *   [0] n, [1] left cut (0/1), [2] right cut (0/1), [3] n_har, [4] n_sin, [5] n_con, [6] n_imp,
 *   m[n], c[n+1], d[n+1], C[n+1], D[n+1], ex[n+1], ev[n+1],
 *   harmonic (body, ΔF, Ω, φ) x n_har, sine (body, ΔF, Ω, φ, A_S) x n_sin, contact (body, A_C, B_C) x n_con,
 *   impulse (body, ΔF, t_I, Δt_I, δ_I) x n_imp.   Bodies are local indices 1..n.
 *
 * Coupling element ("chain_element"): nx = 0, inputs (x_L, v_L, x_R, v_R) = (^L x_n, ^L v_n, ^{L+1} x_1,
 * ^{L+1} v_1), output λ_L = F_SD,c(x_R - x_L, v_R - v_L) (2.18)-(2.19), feed-through.
 * params: c, d, C, D, e_x, e_v. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "models/builtin.h"

#define CONTACT_MAX_EXP 700.0 /* exp(700) ~ 1e304: the contact force stays finite (spec §3.1 overflow remark) */
#define CHAIN_MAX_BODIES (1 << 22)

/* |a|^e for an element exponent: integer exponents by repeated squaring (exact, fast), others by pow. */
static inline double absp(double a, double e, int ie) {
    a = fabs(a);
    if (ie == 3) return a * a * a;
    if (ie == 1) return a;
    if (ie > 0) {
        double r = 1.0, b = a;
        for (int k = ie; k; k >>= 1) {
            if (k & 1) r *= b;
            b *= b;
        }
        return r;
    }
    return pow(a, e);
}

typedef struct chain_elem {
    double c, d, C, D, ex, ev;
    int iex, iev;      /* integer exponents (> 0) or 0 when non-integer */
} chain_elem;

static double elem_force(const chain_elem *e, double dx, double dv) {
    double f = e->c * dx + e->d * dv;
    if (e->C != 0.0) f += e->C * copysign(absp(dx, e->ex, e->iex), dx);
    if (e->D != 0.0) f += e->D * copysign(absp(dv, e->ev, e->iev), dv);
    return f;
}

static int int_exponent(double e) {
    return (e >= 1.0 && e <= 64.0 && e == floor(e)) ? (int)e : 0;
}

typedef struct force_har { int body; double F, W, phi; } force_har;
typedef struct force_sin { int body; double F, W, phi; int A; } force_sin;
typedef struct force_con { int body; double A, B; } force_con;
typedef struct force_imp { int body; double F, tI, dtI, dI; } force_imp;

typedef struct chain_ctx {
    int n, lcut, rcut;
    double *minv;          /* n */
    chain_elem *el;        /* n + 1 */
    int nhar, nsin, ncon, nimp;
    force_har *har;
    force_sin *sin_;
    force_con *con;
    force_imp *imp;
    double *fext;          /* n scratch: external forces at the current evaluation */
} chain_ctx;

static double ipow_signed(double s, int A) {
    double r = 1.0, b = s;
    for (int k = A; k; k >>= 1) {
        if (k & 1) r *= b;
        b *= b;
    }
    return r;
}

static int chain_rhs(void *c, double t, const double *z, const double *u, double *zdot) {
    const chain_ctx *k = c;
    const int n = k->n;
    double *fe = k->fext;
    memset(fe, 0, sizeof(double) * (size_t)n);
    for (int q = 0; q < k->nhar; q++) fe[k->har[q].body] += k->har[q].F * sin(k->har[q].W * t + k->har[q].phi);
    for (int q = 0; q < k->nsin; q++)
        fe[k->sin_[q].body] += k->sin_[q].F * ipow_signed(sin(k->sin_[q].W * t + k->sin_[q].phi), k->sin_[q].A);
    for (int q = 0; q < k->ncon; q++) {
        double a = k->con[q].B * z[2 * k->con[q].body];
        fe[k->con[q].body] += k->con[q].A * exp(a < CONTACT_MAX_EXP ? a : CONTACT_MAX_EXP);
    }
    for (int q = 0; q < k->nimp; q++) {
        const force_imp *p = &k->imp[q];
        fe[p->body] += p->F * 0.5 * (tanh((t - p->tI) / p->dI) - tanh((t - (p->tI + p->dtI)) / p->dI));
    }
    /* F_left of body i = F_SD,i (element i), F_right = F_SD,i+1; walk the bodies carrying the element force */
    double fl;
    if (k->lcut) fl = u[0];
    else fl = elem_force(&k->el[0], z[0], z[1]);
    for (int i = 0; i < n; i++) {
        double fr;
        if (i + 1 < n) fr = elem_force(&k->el[i + 1], z[2 * i + 2] - z[2 * i], z[2 * i + 3] - z[2 * i + 1]);
        else if (k->rcut) fr = u[k->lcut];
        else fr = elem_force(&k->el[n], -z[2 * i], -z[2 * i + 1]);
        zdot[2 * i] = z[2 * i + 1];
        zdot[2 * i + 1] = (-fl + fr + fe[i]) * k->minv[i];
        fl = fr;
    }
    return 0;
}

static int chain_output(void *c, double t, const double *z, const double *u, double *y) {
    const chain_ctx *k = c;
    const int n = k->n;
    y[0] = z[0];
    y[1] = z[2 * n - 2];
    y[2] = z[1];
    y[3] = z[2 * n - 1];
    return 0;
}

static int chain_output_dt(void *c, double t, const double *z, const double *u, const double *udot, double *ydot) {
    /* y' = (v_1, v_n, a_1, a_n): the force balances of the two coupling bodies only (no full rhs). */
    const chain_ctx *k = c;
    const int n = k->n;
    ydot[0] = z[1];
    ydot[1] = z[2 * n - 1];
    double fe0 = 0.0, fen = 0.0;
    for (int q = 0; q < k->nhar; q++) {
        double f = k->har[q].F * sin(k->har[q].W * t + k->har[q].phi);
        if (k->har[q].body == 0) fe0 += f;
        if (k->har[q].body == n - 1) fen += f;
    }
    for (int q = 0; q < k->nsin; q++) {
        double f = k->sin_[q].F * ipow_signed(sin(k->sin_[q].W * t + k->sin_[q].phi), k->sin_[q].A);
        if (k->sin_[q].body == 0) fe0 += f;
        if (k->sin_[q].body == n - 1) fen += f;
    }
    for (int q = 0; q < k->ncon; q++) {
        double a = k->con[q].B * z[2 * k->con[q].body];
        double f = k->con[q].A * exp(a < CONTACT_MAX_EXP ? a : CONTACT_MAX_EXP);
        if (k->con[q].body == 0) fe0 += f;
        if (k->con[q].body == n - 1) fen += f;
    }
    for (int q = 0; q < k->nimp; q++) {
        const force_imp *p = &k->imp[q];
        double f = p->F * 0.5 * (tanh((t - p->tI) / p->dI) - tanh((t - (p->tI + p->dtI)) / p->dI));
        if (p->body == 0) fe0 += f;
        if (p->body == n - 1) fen += f;
    }
    double fl0 = k->lcut ? u[0] : elem_force(&k->el[0], z[0], z[1]);
    double fr0 = n > 1 ? elem_force(&k->el[1], z[2] - z[0], z[3] - z[1])
                       : (k->rcut ? u[k->lcut] : elem_force(&k->el[1], -z[0], -z[1]));
    double fln = n > 1 ? elem_force(&k->el[n - 1], z[2 * n - 2] - z[2 * n - 4], z[2 * n - 1] - z[2 * n - 3]) : fl0;
    double frn = k->rcut ? u[k->lcut] : elem_force(&k->el[n], -z[2 * n - 2], -z[2 * n - 1]);
    ydot[2] = (-fl0 + fr0 + fe0) * k->minv[0];
    ydot[3] = (-fln + frn + fen) * k->minv[n - 1];
    return 0;
}

static void chain_free(void *c) {
    chain_ctx *k = c;
    if (!k) return;
    free(k->minv); free(k->el); free(k->har); free(k->sin_); free(k->con); free(k->imp); free(k->fext);
    free(k);
}

static int count(double v, long max, long *out) {
    if (!(v >= 0.0) || v > (double)max || v != floor(v)) return -1;
    *out = (long)v;
    return 0;
}

static const cs_model_ops SEGMENT_OPS = {CS_MODEL_GENERIC, chain_rhs, chain_output, chain_output_dt, NULL, NULL,
                                         chain_free};

static int segment_create(int np, const double *p, const char *name, cs_model **out, cs_err *err) {
    long n, lc, rc, nh, ns, nc, ni;
    if (np < 7 || count(p[0], CHAIN_MAX_BODIES, &n) || n < 1 || count(p[1], 1, &lc) || count(p[2], 1, &rc) ||
        count(p[3], CHAIN_MAX_BODIES, &nh) || count(p[4], CHAIN_MAX_BODIES, &ns) ||
        count(p[5], CHAIN_MAX_BODIES, &nc) || count(p[6], CHAIN_MAX_BODIES, &ni)) {
        return cs_fail(err, CS_ERR_ARG, "chain_segment %s: malformed header", name);
    }
    long need = 7 + n + 6 * (n + 1) + 4 * nh + 5 * ns + 3 * nc + 5 * ni;
    if (np != need) {
        return cs_fail(err, CS_ERR_ARG, "chain_segment %s: expected %ld parameters, got %d", name, need, np);
    }
    chain_ctx *k = calloc(1, sizeof *k);
    cs_model *m = cs_model_new_empty(2 * (int)n, (int)(lc + rc), 4, name);
    if (k) {
        k->minv = malloc(sizeof(double) * (size_t)n);
        k->el = malloc(sizeof(chain_elem) * (size_t)(n + 1));
        k->fext = malloc(sizeof(double) * (size_t)n);
        k->har = malloc(sizeof(force_har) * (size_t)(nh + 1));
        k->sin_ = malloc(sizeof(force_sin) * (size_t)(ns + 1));
        k->con = malloc(sizeof(force_con) * (size_t)(nc + 1));
        k->imp = malloc(sizeof(force_imp) * (size_t)(ni + 1));
    }
    if (!m || !k || !k->minv || !k->el || !k->fext || !k->har || !k->sin_ || !k->con || !k->imp) {
        chain_free(k);
        cs_model_free_empty(m);
        return cs_fail(err, CS_ERR_NOMEM, "chain_segment %s: out of memory", name);
    }
    k->n = (int)n; k->lcut = (int)lc; k->rcut = (int)rc;
    k->nhar = (int)nh; k->nsin = (int)ns; k->ncon = (int)nc; k->nimp = (int)ni;
    const double *q = p + 7;
    const char *bad = NULL;
    for (long i = 0; i < n; i++) {
        if (!(q[i] > 0.0)) bad = "masses must be positive";
        k->minv[i] = 1.0 / q[i];
    }
    q += n;
    for (long e = 0; e <= n; e++) {
        chain_elem *el = &k->el[e];
        el->c = q[e]; el->d = q[n + 1 + e]; el->C = q[2 * (n + 1) + e]; el->D = q[3 * (n + 1) + e];
        el->ex = q[4 * (n + 1) + e]; el->ev = q[5 * (n + 1) + e];
        if (!(el->ex > 0.0) || !(el->ev > 0.0)) bad = "exponents must be positive";
        el->iex = int_exponent(el->ex);
        el->iev = int_exponent(el->ev);
    }
    q += 6 * (n + 1);
    for (long j = 0; j < nh; j++, q += 4) k->har[j] = (force_har){(int)q[0] - 1, q[1], q[2], q[3]};
    for (long j = 0; j < ns; j++, q += 5) {
        k->sin_[j] = (force_sin){(int)q[0] - 1, q[1], q[2], q[3], (int)q[4]};
        if (!(q[4] >= 0.0 && q[4] <= 1e6 && q[4] == floor(q[4]))) bad = "sine power A_S must be an integer >= 0";
    }
    for (long j = 0; j < nc; j++, q += 3) k->con[j] = (force_con){(int)q[0] - 1, q[1], q[2]};
    for (long j = 0; j < ni; j++, q += 5) {
        k->imp[j] = (force_imp){(int)q[0] - 1, q[1], q[2], q[3], q[4]};
        if (!(q[4] > 0.0)) bad = "impulse width delta_I must be positive";
    }
    const double *b = p + 7 + n + 6 * (n + 1);
    int stride[4] = {4, 5, 3, 5};
    long cnt[4] = {nh, ns, nc, ni};
    for (int g = 0; g < 4; g++)
        for (long j = 0; j < cnt[g]; j++, b += stride[g])
            if (!(b[0] >= 1.0 && b[0] <= (double)n && b[0] == floor(b[0]))) bad = "force body index out of range";
    if (bad) {
        chain_free(k);
        cs_model_free_empty(m);
        return cs_fail(err, CS_ERR_ARG, "chain_segment %s: %s", name, bad);
    }
    cs_model_attach(m, &SEGMENT_OPS, k);
    m->feedthrough = 0;
    *out = m;
    return CS_OK;
}

typedef struct elem_ctx { chain_elem el; } elem_ctx;

static int elem_rhs(void *c, double t, const double *x, const double *u, double *xdot) { return 0; }

static int elem_output(void *c, double t, const double *x, const double *u, double *y) {
    y[0] = elem_force(&((elem_ctx *)c)->el, u[2] - u[0], u[3] - u[1]);
    return 0;
}

static const cs_model_ops ELEMENT_OPS = {CS_MODEL_GENERIC, elem_rhs, elem_output, NULL, NULL, NULL, free};

static int element_create(int np, const double *p, const char *name, cs_model **out, cs_err *err) {
    if (np != 6) return cs_fail(err, CS_ERR_ARG, "chain_element %s: expected 6 parameters", name);
    if (!(p[4] > 0.0) || !(p[5] > 0.0))
        return cs_fail(err, CS_ERR_ARG, "chain_element %s: exponents must be positive", name);
    elem_ctx *k = malloc(sizeof *k);
    cs_model *m = cs_model_new_empty(0, 4, 1, name);
    if (!k || !m) {
        free(k); cs_model_free_empty(m);
        return cs_fail(err, CS_ERR_NOMEM, "chain_element %s: out of memory", name);
    }
    k->el = (chain_elem){p[0], p[1], p[2], p[3], p[4], p[5], int_exponent(p[4]), int_exponent(p[5])};
    cs_model_attach(m, &ELEMENT_OPS, k);
    m->feedthrough = 1;
    *out = m;
    return CS_OK;
}

const cs_builtin_model cs_model_chain_segment = {"chain_segment", segment_create};
const cs_builtin_model cs_model_chain_element = {"chain_element", element_create};
