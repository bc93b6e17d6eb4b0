// poly_halide.cpp: Halide peers of bench_poly (gemm, jacobi2d), JIT-compiled with a schedule from one of Halide's autoschedulers.
//
// Built as build/bench/poly_halide.so when Debian's libhalide14-0-dev is installed
// (Makefile, bench-poly); bench_poly loads it in the child process of a Halide peer.
// The algorithms are written here from the same definitions as the suite's .cachet
// files; the schedule is the autoscheduler's alone (Mullapudi2016, Li2018 or
// Adams2019, loaded from Halide's libautoschedule_*.so plugins), given the problem's
// real sizes as estimates, the thread count as its parallelism and the last-level
// cache size. The harness verifies what it computes like every other peer.
#include <Halide.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

using namespace Halide;

namespace {

// One prepared kernel: its compiled pipeline and the buffers it runs on.
struct prepared {
    std::string kernel;
    Pipeline pipe;
    // gemm
    Buffer<double> a, b, c, cout;
    ImageParam pa{Float(64), 2, "A"}, pb{Float(64), 2, "B"}, pc{Float(64), 2, "C"};
    // jacobi2d: (A, B) -> (A', B') on the interior, ping-pong
    Buffer<double> ja[2], jb[2];
    int steps = 0, n = 0;
    double *user_a = nullptr, *user_b = nullptr;
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

// gemm: C = 1.5 A B + 1.2 C, row-major [i][j]: Halide's x is j (innermost), y is i.
void build_gemm(prepared *p, void *const *arrays, const int64_t *params)
{
    int ni = (int)params[0], nj = (int)params[1], nk = (int)params[2];
    p->a = Buffer<double>((double *)arrays[0], nk, ni);
    p->b = Buffer<double>((double *)arrays[1], nj, nk);
    p->c = Buffer<double>((double *)arrays[2], nj, ni);
    p->cout = Buffer<double>(nj, ni);
    Var x("x"), y("y");
    RDom k(0, nk, "k");
    Func prod("prod"), out("out");
    prod(x, y) = cast<double>(0);
    prod(x, y) += p->pa(k, y) * p->pb(x, k);
    out(x, y) = Expr(1.2) * p->pc(x, y) + Expr(1.5) * prod(x, y);
    p->pa.set_estimates({{0, nk}, {0, ni}});
    p->pb.set_estimates({{0, nj}, {0, nk}});
    p->pc.set_estimates({{0, nj}, {0, ni}});
    out.set_estimates({{0, nj}, {0, ni}});
    p->pipe = Pipeline(out);
}

// jacobi2d step: B' = 0.2 * 5-point(A) on the interior, B elsewhere; A' = 0.2 * 5-point(B')
// on the interior. The outputs are the interiors (crops of the next buffers); the
// boundaries of both arrays never change, so each buffer pair starts as a copy.
ImageParam ja_in(Float(64), 2, "Ain"), jb_in(Float(64), 2, "Bin");

void build_jacobi2d(prepared *p, void *const *arrays, const int64_t *params)
{
    p->steps = (int)params[0];
    p->n = (int)params[1];
    int n = p->n;
    p->user_a = (double *)arrays[0];
    p->user_b = (double *)arrays[1];
    for (int s = 0; s < 2; s++) {
        p->ja[s] = Buffer<double>(n, n);
        p->jb[s] = Buffer<double>(n, n);
    }
    Var x("x"), y("y");
    Func bfull("bfull"), bout("bout"), aout("aout");
    Expr interior = x >= 1 && x < n - 1 && y >= 1 && y < n - 1;
    Func ac = BoundaryConditions::repeat_edge(ja_in);
    bfull(x, y) = select(interior,
                         Expr(0.2) * (ac(x, y) + ac(x - 1, y) + ac(x + 1, y) + ac(x, y + 1) + ac(x, y - 1)),
                         BoundaryConditions::repeat_edge(jb_in)(x, y));
    bout(x, y) = bfull(x, y);
    aout(x, y) = Expr(0.2) * (bfull(x, y) + bfull(x - 1, y) + bfull(x + 1, y) + bfull(x, y + 1) + bfull(x, y - 1));
    ja_in.set_estimates({{0, n}, {0, n}});
    jb_in.set_estimates({{0, n}, {0, n}});
    bout.set_estimates({{1, n - 2}, {1, n - 2}});
    aout.set_estimates({{1, n - 2}, {1, n - 2}});
    p->pipe = Pipeline({aout, bout});
}

} // namespace

// Prepares kernel with autoscheduler sched for threads on the caller's buffers (the
// kernel's arrays in declaration order, its params in declaration order). Returns a
// handle, or nullptr with the reason in why.
extern "C" void *poly_halide_new(const char *kernel, const char *sched, int threads, void *const *arrays,
                                 const int64_t *params, char *why, size_t cap)
{
    try {
        const char *plugin = plugin_of(sched);
        if (!plugin) {
            snprintf(why, cap, "unknown autoscheduler %s", sched);
            return nullptr;
        }
        auto *p = new prepared;
        p->kernel = kernel;
        if (p->kernel == "gemm")
            build_gemm(p, arrays, params);
        else if (p->kernel == "jacobi2d")
            build_jacobi2d(p, arrays, params);
        else {
            snprintf(why, cap, "%s is not written in Halide here", kernel);
            delete p;
            return nullptr;
        }
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

// One run on the buffers given to poly_halide_new; 0 on success.
extern "C" int poly_halide_run(void *h)
{
    auto *p = static_cast<prepared *>(h);
    try {
        if (p->kernel == "gemm") {
            p->pa.set(p->a);
            p->pb.set(p->b);
            p->pc.set(p->c);
            p->pipe.realize(p->cout);
            memcpy(p->c.data(), p->cout.data(), p->c.size_in_bytes());
            return 0;
        }
        int n = p->n;
        size_t bytes = (size_t)n * n * sizeof(double);
        for (int s = 0; s < 2; s++) { // both pairs start as the inputs: their boundaries
            memcpy(p->ja[s].data(), p->user_a, bytes);
            memcpy(p->jb[s].data(), p->user_b, bytes);
        }
        int cur = 0;
        for (int t = 0; t < p->steps; t++) {
            int nxt = 1 - cur;
            ja_in.set(p->ja[cur]);
            jb_in.set(p->jb[cur]);
            Buffer<double> ao(p->ja[nxt].get()->cropped({{1, n - 2}, {1, n - 2}}));
            Buffer<double> bo(p->jb[nxt].get()->cropped({{1, n - 2}, {1, n - 2}}));
            p->pipe.realize({ao, bo});
            cur = nxt;
        }
        memcpy(p->user_a, p->ja[cur].data(), bytes);
        memcpy(p->user_b, p->jb[cur].data(), bytes);
        return 0;
    } catch (...) {
        return -1;
    }
}
