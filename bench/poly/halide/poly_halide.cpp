// poly_halide.cpp: Halide peers of bench_poly (the matrix products but syrk/syr2k, the matrix-vector kernels, the stencils but seidel2d), JIT-compiled with a schedule from one of Halide's autoschedulers.
//
// Built as build/bench/poly_halide.so when Debian's libhalide14-0-dev is installed
// (Makefile, bench-poly); bench_poly loads it in the child process of a Halide peer.
// The algorithms are written here from the same definitions as the suite's .cachet
// files (bench/poly/kernels); the schedule is the autoscheduler's alone
// (Mullapudi2016, Li2018 or Adams2019, loaded from Halide's libautoschedule_*.so
// plugins), given the problem's real sizes as estimates, the thread count as its
// parallelism and the last-level cache size. The harness verifies what it computes
// like every other peer.
//
// Layout: the suite's arrays are row-major, so a C array X[i][j] is the Halide
// buffer X(j, i) (Halide's first dimension is the innermost).
#include <Halide.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

using namespace Halide;

namespace {

// a crop of a runtime buffer: (min, extent) per dimension
typedef std::vector<std::pair<int, int>> region;

// One prepared kernel: its compiled pipeline and the buffers it runs on.
struct prepared {
    Pipeline pipe;
    // one-shot kernels: inputs bound at each run, outputs realized, some copied back
    std::vector<ImageParam> ins;
    std::vector<Buffer<double>> in_bufs;
    std::vector<Buffer<>> outs;
    std::vector<double *> back; // where outs[i] is copied after a run
    // time-stepped stencils (A, B) -> (A', B') on the interior, ping-pong between two pairs
    int steps = 0;
    ImageParam a_in, b_in;
    Buffer<double> pa[2], pb[2];
    region interior;
    double *user_a = nullptr, *user_b = nullptr;
    // fdtd2d: three fields (ex, ey, hz) -> (ex', ey', hz') on the whole grid, ping-pong
    bool fdtd = false;
    ImageParam f_in[3];
    Param<double> source{"source"};
    Buffer<double> fb[2][3];
    double *user_f[3] = {nullptr, nullptr, nullptr};
    const double *fict = nullptr;
    std::string error; // why the last run failed
};

const char *plugin_of(const std::string &s)
{
    if (s == "Mullapudi2016")
        return "libautoschedule_mullapudi2016.so";
    if (s == "Li2018")
        return "libautoschedule_li2018.so";
    if (s == "Adams2019")
        return "libautoschedule_adams2019.so";
    return nullptr;
}

// The caller's array as a Halide buffer of the given sizes, innermost first.
Buffer<double> wrap(void *p, const std::vector<int> &sizes)
{
    return Buffer<double>((double *)p, sizes);
}

// An input: an ImageParam bound to the caller's array, its estimates its whole extent,
// read through repeat_edge so that a schedule computing a producer over a rounded-up
// region (a vector or tile past the edge) reads inside the array (Halide partitions the
// loops, so the interior has no clamps).
Func input(prepared *p, const char *name, void *data, const std::vector<int> &sizes)
{
    ImageParam ip(Float(64), (int)sizes.size(), name);
    Region est;
    for (int s : sizes)
        est.push_back(Range(0, s));
    ip.set_estimates(est);
    p->ins.push_back(ip);
    p->in_bufs.push_back(wrap(data, sizes));
    return BoundaryConditions::repeat_edge(ip);
}

// An output realized over sizes into a scratch buffer of Halide's own, copied into the
// caller's array after each run (the copy is timed; it is O(output), the kernels are
// O(output x reduction)). Realizing a single output straight into the caller's memory
// crashed in Halide 14's JIT code here (gesummv, atax), so every output is copied.
void output(prepared *p, Func f, void *data, const std::vector<int> &sizes)
{
    Region est;
    for (int s : sizes)
        est.push_back(Range(0, s));
    f.set_estimates(est);
    p->outs.push_back(Buffer<double>(sizes));
    p->back.push_back((double *)data);
}

Expr c(double v)
{
    return Expr(v); // an f64 constant
}

// gemm: C = 1.5 A B + 1.2 C.
std::vector<Func> build_gemm(prepared *p, void *const *a, const int64_t *n)
{
    int ni = (int)n[0], nj = (int)n[1], nk = (int)n[2];
    Func A = input(p, "in_A", a[0], {nk, ni}), B = input(p, "in_B", a[1], {nj, nk}),
               C = input(p, "in_C", a[2], {nj, ni});
    Var x("x"), y("y");
    RDom k(0, nk, "k");
    Func prod("f_prod"), out("f_out");
    prod(x, y) = c(0);
    prod(x, y) += A(k, y) * B(x, k);
    out(x, y) = c(1.2) * C(x, y) + c(1.5) * prod(x, y);
    output(p, out, a[2], {nj, ni});
    return {out};
}

// gesummv: y = 1.5 A x + 1.2 B x.
std::vector<Func> build_gesummv(prepared *p, void *const *a, const int64_t *n)
{
    int N = (int)n[0];
    Func A = input(p, "in_A", a[0], {N, N}), B = input(p, "in_B", a[1], {N, N}),
               X = input(p, "in_x", a[2], {N});
    Var i("i");
    RDom j(0, N, "j");
    Func y("f_y");
    y(i) = c(0);
    y(i) += c(1.5) * A(j, i) * X(j) + c(1.2) * B(j, i) * X(j);
    output(p, y, a[3], {N});
    return {y};
}

// atax: y = A^T (A x), A is M x N.
std::vector<Func> build_atax(prepared *p, void *const *a, const int64_t *n)
{
    int M = (int)n[0], N = (int)n[1];
    Func A = input(p, "in_A", a[0], {N, M}), X = input(p, "in_x", a[1], {N});
    Var i("i"), jv("jv");
    RDom j(0, N, "j"), ii(0, M, "ii");
    Func t("f_t"), y("f_y");
    t(i) = c(0);
    t(i) += A(j, i) * X(j);
    y(jv) = c(0);
    y(jv) += A(jv, ii) * t(ii);
    output(p, y, a[3], {N});
    return {y};
}

// bicg: s = A^T r, q = A p, A is N x M.
std::vector<Func> build_bicg(prepared *p, void *const *a, const int64_t *n)
{
    int M = (int)n[0], N = (int)n[1];
    Func A = input(p, "in_A", a[0], {M, N}), R = input(p, "in_r", a[1], {N}),
               P = input(p, "in_p", a[2], {M});
    Var i("i"), jv("jv");
    RDom ii(0, N, "ii"), j(0, M, "j");
    Func s("f_s"), q("f_q");
    s(jv) = c(0);
    s(jv) += R(ii) * A(jv, ii);
    q(i) = c(0);
    q(i) += A(j, i) * P(j);
    output(p, s, a[3], {M});
    output(p, q, a[4], {N});
    return {s, q};
}

// mvt: x1 = x1 + A y1, x2 = x2 + A^T y2.
std::vector<Func> build_mvt(prepared *p, void *const *a, const int64_t *n)
{
    int N = (int)n[0];
    Func A = input(p, "in_A", a[0], {N, N}), Y1 = input(p, "in_y1", a[1], {N}),
               Y2 = input(p, "in_y2", a[2], {N}), X1 = input(p, "in_x1", a[3], {N}),
               X2 = input(p, "in_x2", a[4], {N});
    Var i("i");
    RDom j(0, N, "j");
    Func x1("f_x1o"), x2("f_x2o");
    x1(i) = X1(i);
    x1(i) += A(j, i) * Y1(j);
    x2(i) = X2(i);
    x2(i) += A(i, j) * Y2(j);
    output(p, x1, a[3], {N});
    output(p, x2, a[4], {N});
    return {x1, x2};
}

// mm2 (2mm): T = 1.5 A B; D = 1.2 D + T C.
std::vector<Func> build_mm2(prepared *p, void *const *a, const int64_t *n)
{
    int ni = (int)n[0], nj = (int)n[1], nk = (int)n[2], nl = (int)n[3];
    Func A = input(p, "in_A", a[0], {nk, ni}), B = input(p, "in_B", a[1], {nj, nk}),
               C = input(p, "in_C", a[2], {nl, nj}), D = input(p, "in_D", a[4], {nl, ni});
    Var x("x"), y("y");
    RDom k(0, nk, "k"), j(0, nj, "j");
    Func t("f_t"), d("f_d");
    t(x, y) = c(0);
    t(x, y) += c(1.5) * A(k, y) * B(x, k);
    d(x, y) = c(1.2) * D(x, y);
    d(x, y) += t(j, y) * C(x, j);
    output(p, d, a[4], {nl, ni});
    return {d};
}

// mm3 (3mm): E = A B, F = C D, G = E F.
std::vector<Func> build_mm3(prepared *p, void *const *a, const int64_t *n)
{
    int ni = (int)n[0], nj = (int)n[1], nk = (int)n[2], nl = (int)n[3], nm = (int)n[4];
    Func A = input(p, "in_A", a[0], {nk, ni}), B = input(p, "in_B", a[1], {nj, nk}),
               C = input(p, "in_C", a[2], {nm, nj}), D = input(p, "in_D", a[3], {nl, nm});
    Var x("x"), y("y");
    RDom k(0, nk, "k"), m(0, nm, "m"), j(0, nj, "j");
    Func e("f_e"), f("f_f"), g("f_g");
    e(x, y) = c(0);
    e(x, y) += A(k, y) * B(x, k);
    f(x, y) = c(0);
    f(x, y) += C(m, y) * D(x, m);
    g(x, y) = c(0);
    g(x, y) += e(j, y) * f(x, j);
    output(p, g, a[6], {nl, ni});
    return {g};
}

// two_index: T[a,q] = sum_p C1[p,a] A[p,q]; B[a,b] = sum_q T[a,q] C2[q,b].
std::vector<Func> build_two_index(prepared *p, void *const *a, const int64_t *n)
{
    int v = (int)n[0], nn = (int)n[1];
    Func A = input(p, "in_A", a[0], {nn, nn}), C1 = input(p, "in_C1", a[1], {v, nn}),
               C2 = input(p, "in_C2", a[2], {v, nn});
    Var x("x"), y("y");
    RDom pp(0, nn, "pp"), q(0, nn, "q");
    Func t("f_t"), b("f_b");
    t(x, y) = c(0); // x = q, y = a
    t(x, y) += C1(y, pp) * A(x, pp);
    b(x, y) = c(0); // x = b, y = a
    b(x, y) += t(q, y) * C2(x, q);
    output(p, b, a[4], {v, v});
    return {b};
}

// doitgen: A[r,q,p] = sum_s A[r,q,s] C4[s,p] for every (r, q).
std::vector<Func> build_doitgen(prepared *p, void *const *a, const int64_t *n)
{
    int nq = (int)n[0], nr = (int)n[1], np = (int)n[2];
    Func A = input(p, "in_A", a[0], {np, nq, nr}), C4 = input(p, "in_C4", a[1], {np, np});
    Var x("x"), y("y"), z("z");
    RDom s(0, np, "s");
    Func o("f_o");
    o(x, y, z) = c(0);
    o(x, y, z) += A(s, y, z) * C4(x, s);
    output(p, o, a[0], {np, nq, nr});
    return {o};
}

// covariance: mean, the data centred, cov = D^T D / (N-1) (the full matrix).
std::vector<Func> build_covariance(prepared *p, void *const *a, const int64_t *n)
{
    int m = (int)n[0], nn = (int)n[1];
    Func D = input(p, "in_data", a[0], {m, nn});
    Var j("j"), i("i");
    RDom r(0, nn, "r"), k(0, nn, "k");
    // an output Func is never read by another Func (a schedule may compute the reader
    // past the output's extent): mean and the centred data are internal, copied out
    Func sum("f_sum"), mean("f_mean"), cd("f_cd"), cov("f_cov");
    sum(j) = c(0);
    sum(j) += D(j, r);
    mean(j) = sum(j) / c((double)nn);
    cd(j, i) = D(j, i) - mean(j);
    cov(j, i) = c(0); // x = b, y = a
    cov(j, i) += cd(i, k) * cd(j, k);
    Func covo("f_covo"), cdo("f_cdo"), meano("f_meano");
    covo(j, i) = cov(j, i) / c((double)(nn - 1));
    cdo(j, i) = cd(j, i);
    meano(j) = mean(j);
    output(p, cdo, a[0], {m, nn});
    output(p, meano, a[1], {m});
    output(p, covo, a[2], {m, m});
    return {cdo, meano, covo};
}

// gemver: A' = A + u1 v1^T + u2 v2^T; x' = x + 1.2 A'^T y + z; w' = w + 1.5 A' x'.
std::vector<Func> build_gemver(prepared *p, void *const *a, const int64_t *n)
{
    int N = (int)n[0];
    Func A = input(p, "in_A", a[0], {N, N}), U1 = input(p, "in_u1", a[1], {N}),
               V1 = input(p, "in_v1", a[2], {N}), U2 = input(p, "in_u2", a[3], {N}),
               V2 = input(p, "in_v2", a[4], {N}), Y = input(p, "in_y", a[5], {N}),
               Z = input(p, "in_z", a[6], {N}), X = input(p, "in_x", a[7], {N}),
               W = input(p, "in_w", a[8], {N});
    Var i("i"), j("j");
    RDom r(0, N, "r");
    // A' and x' are read by later stages: internal Funcs, copied to outputs
    Func ap("f_ap"), xs("f_xs"), xp("f_xp"), wo("f_wo"), apo("f_apo"), xo("f_xo");
    ap(j, i) = A(j, i) + (U1(i) * V1(j) + U2(i) * V2(j));
    xs(i) = X(i);
    xs(i) += c(1.2) * ap(i, r) * Y(r);
    xp(i) = xs(i) + Z(i);
    wo(i) = W(i);
    wo(i) += c(1.5) * ap(r, i) * xp(r);
    apo(j, i) = ap(j, i);
    xo(i) = xp(i);
    output(p, apo, a[0], {N, N});
    output(p, xo, a[7], {N});
    output(p, wo, a[8], {N});
    return {apo, xo, wo};
}

// fdtd2d step t: ey'[0,:] = fict[t], ey' -= 0.5 d/dx hz elsewhere; ex' -= 0.5 d/dy hz
// (column 0 kept); hz' -= 0.7 (d/dy ex' + d/dx ey') but on the last row and column.
// Halide x is j (NY), y is i (NX); every point is an output (the kept ones copied).
std::vector<Func> build_fdtd2d(prepared *p, void *const *a, const int64_t *n)
{
    p->steps = (int)n[0];
    int nx = (int)n[1], ny = (int)n[2];
    p->fdtd = true;
    p->fict = (const double *)a[0];
    static const char *const NAME[3] = {"in_ex", "in_ey", "in_hz"};
    Region all = {Range(0, ny), Range(0, nx)};
    for (int f = 0; f < 3; f++) {
        p->user_f[f] = (double *)a[1 + f];
        p->f_in[f] = ImageParam(Float(64), 2, NAME[f]);
        p->f_in[f].set_estimates(all);
        for (int s = 0; s < 2; s++)
            p->fb[s][f] = Buffer<double>(ny, nx);
    }
    p->source.set_estimate(0.0);
    Var j("j"), i("i");
    Func ex = BoundaryConditions::repeat_edge(p->f_in[0]), ey = BoundaryConditions::repeat_edge(p->f_in[1]),
         hz = BoundaryConditions::repeat_edge(p->f_in[2]);
    // ex' and ey' are read by hz': internal Funcs, copied to outputs
    Func exn("f_exn"), eyn("f_eyn"), exo("f_exo"), eyo("f_eyo"), hzo("f_hzo");
    eyn(j, i) = select(i == 0, p->source, ey(j, i) - c(0.5) * (hz(j, i) - hz(j, i - 1)));
    exn(j, i) = select(j == 0, ex(j, i), ex(j, i) - c(0.5) * (hz(j, i) - hz(j - 1, i)));
    hzo(j, i) = select(i < nx - 1 && j < ny - 1,
                       hz(j, i) - c(0.7) * (exn(j + 1, i) - exn(j, i) + eyn(j, i + 1) - eyn(j, i)), hz(j, i));
    exo(j, i) = exn(j, i);
    eyo(j, i) = eyn(j, i);
    for (Func f : {exo, eyo, hzo})
        f.set_estimates(all);
    return {exo, eyo, hzo};
}

// The interior test of a d-dimensional n^d grid.
Expr inside(const std::vector<Var> &v, int n)
{
    Expr e = v[0] >= 1 && v[0] < n - 1;
    for (size_t d = 1; d < v.size(); d++)
        e = e && v[d] >= 1 && v[d] < n - 1;
    return e;
}

// A time-stepped stencil step on an n^dims grid: B' = step(A) on the interior (B
// elsewhere), A' = step(B'); step(F, vars) is the update of one point.
template <typename Step>
std::vector<Func> build_stepper(prepared *p, void *const *a, const int64_t *n, int dims, Step step)
{
    p->steps = (int)n[0];
    int N = (int)n[1];
    p->user_a = (double *)a[0];
    p->user_b = (double *)a[1];
    std::vector<int> sizes(dims, N);
    for (int s = 0; s < 2; s++) {
        p->pa[s] = Buffer<double>(sizes);
        p->pb[s] = Buffer<double>(sizes);
    }
    p->a_in = ImageParam(Float(64), dims, "Ain");
    p->b_in = ImageParam(Float(64), dims, "Bin");
    Region all, in; // estimates: (min, extent)
    for (int d = 0; d < dims; d++) {
        all.push_back(Range(0, N));
        in.push_back(Range(1, N - 2));
        p->interior.push_back({1, N - 2}); // a crop: (min, extent)
    }
    p->a_in.set_estimates(all);
    p->b_in.set_estimates(all);
    std::vector<Var> v;
    std::vector<Expr> ve;
    for (int d = 0; d < dims; d++) {
        v.push_back(Var("st_d" + std::to_string(d)));
        ve.push_back(v.back());
    }
    Func ac = BoundaryConditions::repeat_edge(p->a_in), bc = BoundaryConditions::repeat_edge(p->b_in);
    Func bfull("f_bfull"), bout("f_bout"), aout("f_aout");
    bfull(v) = select(inside(v, N), step(ac, ve), bc(ve));
    bout(v) = bfull(v);
    aout(v) = step(bfull, ve);
    bout.set_estimates(in);
    aout.set_estimates(in);
    return {aout, bout};
}

// F at the point e shifted by off along dimension d.
Expr at(Func f, std::vector<Expr> e, int d, int off)
{
    e[d] = e[d] + off;
    return f(e);
}

std::vector<Func> build_jacobi1d(prepared *p, void *const *a, const int64_t *n)
{
    return build_stepper(p, a, n, 1, [](Func f, const std::vector<Expr> &e) {
        return c(0.33333) * (at(f, e, 0, -1) + f(e) + at(f, e, 0, 1));
    });
}

std::vector<Func> build_jacobi2d(prepared *p, void *const *a, const int64_t *n)
{
    // x = j (innermost), y = i: A[i,j] + A[i,j-1] + A[i,j+1] + A[i+1,j] + A[i-1,j]
    return build_stepper(p, a, n, 2, [](Func f, const std::vector<Expr> &e) {
        return c(0.2) * (f(e) + at(f, e, 0, -1) + at(f, e, 0, 1) + at(f, e, 1, 1) + at(f, e, 1, -1));
    });
}

std::vector<Func> build_heat3d(prepared *p, void *const *a, const int64_t *n)
{
    // dimension 2 is i, 1 is j, 0 is k: the i, j, k second differences in the kernel's order
    return build_stepper(p, a, n, 3, [](Func f, const std::vector<Expr> &e) {
        Expr ctr = f(e);
        return c(0.125) * (at(f, e, 2, 1) - c(2) * ctr + at(f, e, 2, -1)) +
               c(0.125) * (at(f, e, 1, 1) - c(2) * ctr + at(f, e, 1, -1)) +
               c(0.125) * (at(f, e, 0, 1) - c(2) * ctr + at(f, e, 0, -1)) + ctr;
    });
}

typedef std::vector<Func> (*builder)(prepared *, void *const *, const int64_t *);

builder builder_of(const std::string &k)
{
    static const struct {
        const char *name;
        builder fn;
    } TABLE[] = {{"gemm", build_gemm},         {"gesummv", build_gesummv},   {"atax", build_atax},
                 {"bicg", build_bicg},         {"mvt", build_mvt},           {"jacobi1d", build_jacobi1d},
                 {"jacobi2d", build_jacobi2d}, {"heat3d", build_heat3d},     {"gemver", build_gemver},
                 {"fdtd2d", build_fdtd2d},     {"mm2", build_mm2},           {"mm3", build_mm3},
                 {"two_index", build_two_index}, {"doitgen", build_doitgen}, {"covariance", build_covariance}};
    for (const auto &t : TABLE)
        if (k == t.name)
            return t.fn;
    return nullptr;
}

} // namespace

// Prepares kernel with autoscheduler sched for threads on the caller's buffers (the
// kernel's arrays in declaration order, temps NULL; its params in declaration order).
// Returns a handle (it lives until the process exits: bench_poly calls this in a child
// process of one peer), or nullptr with the reason in why.
extern "C" void *poly_halide_new(const char *kernel, const char *sched, int threads, void *const *arrays,
                                 const int64_t *params, char *why, size_t cap)
{
    try {
        const char *plugin = plugin_of(sched);
        builder build = builder_of(kernel);
        if (!plugin || !build) {
            snprintf(why, cap, "%s", !plugin ? "unknown autoscheduler" : "not written in Halide here");
            return nullptr;
        }
        auto *p = new prepared;
        p->pipe = Pipeline(build(p, arrays, params));
        // Debian's folder of the plugins unless POLY_HALIDE_PLUGINS names another
        const char *dir = getenv("POLY_HALIDE_PLUGINS");
        load_plugin(std::string(dir ? dir : "/usr/lib/x86_64-linux-gnu/halide14") + "/" + plugin);
        Target t = get_host_target();
        // parallelism: the threads; last-level cache: 32 MiB; balance: Halide's generic 40
        p->pipe.auto_schedule(sched, t, MachineParams(threads, 32u << 20, 40));
        p->pipe.compile_jit(t);
        return p;
    } catch (const std::exception &e) {
        snprintf(why, cap, "%s", e.what());
        why[strcspn(why, "\n")] = 0;
    } catch (...) {
        snprintf(why, cap, "Halide failed");
    }
    return nullptr;
}

// fdtd2d's time loop: the fields ping-pong between two sets of buffers.
static int run_fdtd(prepared *p)
{
    size_t bytes = p->fb[0][0].size_in_bytes();
    for (int f = 0; f < 3; f++)
        memcpy(p->fb[0][f].data(), p->user_f[f], bytes);
    int cur = 0;
    for (int t = 0; t < p->steps; t++) {
        int nxt = 1 - cur;
        for (int f = 0; f < 3; f++)
            p->f_in[f].set(p->fb[cur][f]);
        p->source.set(p->fict[t]);
        std::vector<Buffer<>> outs = {p->fb[nxt][0], p->fb[nxt][1], p->fb[nxt][2]};
        Realization r(outs);
        p->pipe.realize(r);
        cur = nxt;
    }
    for (int f = 0; f < 3; f++)
        memcpy(p->user_f[f], p->fb[cur][f].data(), bytes);
    return 0;
}

// One run on the buffers given to poly_halide_new; 0 on success.
extern "C" int poly_halide_run(void *h)
{
    auto *p = static_cast<prepared *>(h);
    try {
        if (p->fdtd)
            return run_fdtd(p);
        if (p->steps == 0) {
            for (size_t i = 0; i < p->ins.size(); i++)
                p->ins[i].set(p->in_bufs[i]);
            Realization r(p->outs);
            p->pipe.realize(r);
            for (size_t i = 0; i < p->outs.size(); i++)
                memcpy(p->back[i], p->outs[i].data(), p->outs[i].size_in_bytes());
            return 0;
        }
        size_t bytes = p->pa[0].size_in_bytes();
        for (int s = 0; s < 2; s++) { // both pairs start as the inputs: their boundaries
            memcpy(p->pa[s].data(), p->user_a, bytes);
            memcpy(p->pb[s].data(), p->user_b, bytes);
        }
        int cur = 0;
        for (int t = 0; t < p->steps; t++) {
            int nxt = 1 - cur;
            p->a_in.set(p->pa[cur]);
            p->b_in.set(p->pb[cur]);
            std::vector<Buffer<>> outs = {Buffer<double>(p->pa[nxt].get()->cropped(p->interior)),
                                          Buffer<double>(p->pb[nxt].get()->cropped(p->interior))};
            Realization r(outs);
            p->pipe.realize(r);
            cur = nxt;
        }
        memcpy(p->user_a, p->pa[cur].data(), bytes);
        memcpy(p->user_b, p->pb[cur].data(), bytes);
        return 0;
    } catch (const std::exception &e) {
        p->error = e.what();
    } catch (...) {
        p->error = "Halide failed";
    }
    return -1;
}

// Why the last poly_halide_run failed ("" when it did not).
extern "C" const char *poly_halide_error(void *h)
{
    return static_cast<prepared *>(h)->error.c_str();
}
