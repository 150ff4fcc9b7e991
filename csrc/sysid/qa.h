/* Quality assessment of identified IJs and the phase-switch factor (Genser 2020, eq. 2.92, 2.93, section 2.4.4;
 * spec genser2020.md sections 7 and 8.4).
 *
 *   eps_SI,rel^k = (1/n) sum_i |y^k[i] - ybar^k[i]| / (max_{j<=k} y^j[i] - min_{j<=k} y^j[i] + eps)     (2.92)
 *   fac_MBC(t)   = (tanh(-5 + 10 (t - T_start) / t_switch) + 1) / 2,  fac_SBC = 1 - fac_MBC */
#ifndef COSIM_SYSID_QA_H
#define COSIM_SYSID_QA_H

/* Online form: include y in the running range ymin/ymax (n each, updated in place; initialize to +inf/-inf),
 * then return eps_SI,rel for the prediction ybar. */
double cs_eps_si_update(int n, const double *y, const double *ybar, double *ymin, double *ymax, double eps);
/* Series over a record: Y, Ybar: K x n; out[k] = eps_SI,rel^k with the range of rows 0..k. work: 2n doubles. */
void cs_eps_si_series(int K, int n, const double *Y, const double *Ybar, double eps, double *out, double *work);
/* fac_MBC(t) of the tanh switch phase. */
double cs_switch_factor(double t, double t_start, double t_switch);

#endif
