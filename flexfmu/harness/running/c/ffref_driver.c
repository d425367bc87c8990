/* Driver of the compiled reference (flexfmu.harness.running.compiled_reference).
 *
 * Appended to CasADi's generated C, which defines casadi_real, casadi_int and
 *   ffref_step(x, u, p, h, rtol, atol) -> (x_next, error norm)   one step (DOP853 or ROS34PW2)
 *   ffref_control(x, u, p, r, k) -> u                            the sampled law (closed loop only)
 * and, before this file, FFREF_ERROR_ORDER: the power of h the step's error
 * norm goes with (the step size controller's exponent is its inverse).
 *
 * ffref_run advances the arm over `count` samples of length `span`: at each
 * sample the input is the given one (open loop) or the law's (closed loop),
 * held while the adaptive step integrates to the next sample. A one-step
 * method needs no restart where the held input jumps, and the step size is
 * carried from sample to sample. Written for flexfmu; no code from elsewhere.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define FFREF_SAFETY 0.9
#define FFREF_MIN_FACTOR 0.2
#define FFREF_MAX_FACTOR 10.0

typedef struct {
  const casadi_real **arg;
  casadi_real **res;
  casadi_int *iw;
  casadi_real *w;
} ffref_work;

static int ffref_work_alloc(ffref_work *work) {
  casadi_int a1, r1, i1, w1, a2 = 0, r2 = 0, i2 = 0, w2 = 0;
  ffref_step_work(&a1, &r1, &i1, &w1);
#ifdef FFREF_CLOSED_LOOP
  ffref_control_work(&a2, &r2, &i2, &w2);
#endif
  work->arg = malloc(sizeof(casadi_real *) * (a1 > a2 ? a1 : a2));
  work->res = malloc(sizeof(casadi_real *) * (r1 > r2 ? r1 : r2));
  work->iw = malloc(sizeof(casadi_int) * ((i1 > i2 ? i1 : i2) + 1));
  work->w = malloc(sizeof(casadi_real) * ((w1 > w2 ? w1 : w2) + 1));
  return work->arg && work->res && work->iw && work->w ? 0 : 1;
}

static void ffref_work_free(ffref_work *work) {
  free(work->arg);
  free(work->res);
  free(work->iw);
  free(work->w);
}

/* Integrate x over [0, span] with u held; *h is the step to try first and, on
 * return, the step for the next sample. 0 on success, 1 if the step size fell
 * below round-off or the state stopped being finite. */
static int ffref_advance(ffref_work *work, casadi_real *x, casadi_real *x_next, const casadi_real *u,
                         const casadi_real *p, casadi_real span, casadi_real *h, casadi_real rtol,
                         casadi_real atol, int nx, long *steps) {
  casadi_real t = 0.0, h_try = *h, error, rest, factor, tiny = 1e-14 * span;
  int rejected = 0;
  while (span - t > tiny) {
    rest = span - t;
    casadi_real hs = h_try >= rest * (1.0 - 1e-12) ? rest : h_try;
    int last = hs == rest;
    work->arg[0] = x; work->arg[1] = u; work->arg[2] = p; work->arg[3] = &hs;
    work->arg[4] = &rtol; work->arg[5] = &atol;
    work->res[0] = x_next; work->res[1] = &error;
    if (ffref_step(work->arg, work->res, work->iw, work->w, 0)) return 1;
    if (!isfinite(error)) error = 1e300;
    if (error < 1.0) {
      factor = error == 0.0 ? FFREF_MAX_FACTOR : fmin(FFREF_MAX_FACTOR, FFREF_SAFETY * pow(error, -1.0 / FFREF_ERROR_ORDER));
      if (rejected) factor = fmin(1.0, factor);
      memcpy(x, x_next, sizeof(casadi_real) * nx);
      t += hs;
      (*steps)++;
      /* a step cut short to land on the sample says nothing about the next one */
      if (!(last && hs < h_try)) h_try = hs * factor;
      rejected = 0;
    } else {
      h_try = hs * fmax(FFREF_MIN_FACTOR, FFREF_SAFETY * pow(error, -1.0 / FFREF_ERROR_ORDER));
      rejected = 1;
      if (h_try < tiny) return 1;
    }
  }
  *h = h_try;
  return 0;
}

/* Run `count` samples from state x (updated in place). Open loop: inputs[k]
 * (nu values each) is held over sample k. Closed loop (closed != 0): the
 * input of sample k is the law at (x_k, the previous input u, p,
 * references[k] (nr values), gains k); u holds the previous input on entry
 * and the last one on return. states and applied receive x_k and u_k.
 * Returns 0, or 1 + the sample at which integration failed. */
CASADI_SYMBOL_EXPORT int ffref_run(int count, casadi_real span, int nx, int nu, int nr, casadi_real *x,
                                   casadi_real *u, const casadi_real *p, const casadi_real *inputs,
                                   const casadi_real *references, const casadi_real *gains, int closed,
                                   casadi_real rtol, casadi_real atol, casadi_real *h, casadi_real *states,
                                   casadi_real *applied, long *steps) {
  ffref_work work;
  casadi_real *x_next = malloc(sizeof(casadi_real) * nx), *u_next = malloc(sizeof(casadi_real) * (nu + 1));
  int status = 0;
  if (ffref_work_alloc(&work) || !x_next || !u_next) status = 1;
  for (int k = 0; k < count && !status; k++) {
    memcpy(states + (size_t)k * nx, x, sizeof(casadi_real) * nx);
    if (closed) {
#ifdef FFREF_CLOSED_LOOP
      work.arg[0] = x; work.arg[1] = u; work.arg[2] = p; work.arg[3] = references + (size_t)k * nr;
      work.arg[4] = gains; work.res[0] = u_next;
      if (ffref_control(work.arg, work.res, work.iw, work.w, 0)) { status = 1 + k; break; }
      memcpy(u, u_next, sizeof(casadi_real) * nu);
#else
      status = 1 + k;
      break;
#endif
    } else {
      memcpy(u, inputs + (size_t)k * nu, sizeof(casadi_real) * nu);
    }
    memcpy(applied + (size_t)k * nu, u, sizeof(casadi_real) * nu);
    if (ffref_advance(&work, x, x_next, u, p, span, h, rtol, atol, nx, steps)) status = 1 + k;
  }
  ffref_work_free(&work);
  free(x_next);
  free(u_next);
  return status;
}
