"""_kernel.py: cachet.Kernel, a .cachet kernel compiled by libcachet and called on numpy arrays."""
from __future__ import annotations

import json
import math
import operator
import os
import re
import threading
import time
import weakref
from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

from ._lib import ffi, lib, libc



def _target_names() -> Tuple[str, ...]:
    """The plan targets of the library's table ("host", "opencl", "cuda"; docs/ARCHITECTURE.md, "Targets")."""
    names = []
    while lib.ct_target_name(len(names)) != ffi.NULL:
        names.append(ffi.string(lib.ct_target_name(len(names))).decode())
    return tuple(names)


_TARGETS = _target_names()
# how a refusal names a device target's kernels
_TARGET_KERNEL = {"opencl": "an OpenCL kernel", "cuda": "a CUDA kernel"}


def _or_list(names: Sequence[str]) -> str:
    """'a', 'b' or 'c'."""
    quoted = [repr(n) for n in names]
    return quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " or " + quoted[-1]

# ct_dtype -> numpy dtype; ct_role names (include/cachet.h)
_DTYPES = {0: np.dtype(np.float32), 1: np.dtype(np.float64),
           2: np.dtype(np.int32), 3: np.dtype(np.int64)}
_DTYPE_NAMES = {0: "f32", 1: "f64", 2: "i32", 3: "i64"}
_ROLES = {0: "input", 1: "output", 2: "inout", 3: "temp", 4: "const"}
_CT_INPUT, _CT_OUTPUT, _CT_INOUT, _CT_TEMP = 0, 1, 2, 3
_CT_ERR_NOMEM, _CT_ERR_INPUT, _CT_ERR_USAGE = 1, 2, 3
_MAX_THREADS = 4096  # CT_OPT_THREADS takes 0..4096 (src/core/core.c)
_INT64_MAX = (1 << 63) - 1
# work np.shares_memory may spend deciding whether two strided views overlap; past it they count as overlapping
_OVERLAP_WORK = 100000
_PROBE_BASE = 1000  # runtime params take this value while their extents' coefficients are read

# ct_count_source as `cachet predict --json` names it: where each level's count comes from.
_PREDICT_SOURCES = ("model", "simulator", "fully associative estimate", "affine estimate")
# ct_fallback_reason as `cachet predict --json` names it: why a level was simulated.
_PREDICT_FALLBACKS = ("", "set-associative", "model not exact", "model over its work budget",
                      "affine loop bounds")


class CachetError(RuntimeError):
    """An error reported by libcachet (status and message of its ctx)."""

    def __init__(self, message: str, status: int = 0):
        super().__init__(message)
        self.status = status
        self.status_name = ffi.string(lib.ct_strerror(status)).decode() if status else ""


class KernelError(CachetError, ValueError):
    """Bad kernel text, a bad param value or a kernel the checks refuse.

    file, line and col (1-based; 0 when unknown) locate the first error;
    diagnostics holds every error rendered as "file:line:col: error: ..."
    followed by the source line and a caret, as the cachet tool prints them.
    """

    def __init__(self, message: str, status: int = _CT_ERR_INPUT, file: str = "",
                 line: int = 0, col: int = 0, diagnostics: Sequence[str] = ()):
        super().__init__(message, status)
        self.file, self.line, self.col = file, line, col
        self.diagnostics = list(diagnostics)


def _s(p) -> str:
    return ffi.string(p).decode("utf-8", "replace") if p != ffi.NULL else ""


def _ctx_error(ctx, status: int, what: str = "") -> CachetError:
    """The exception for a failed call: KernelError for bad input, MemoryError, else CachetError."""
    msg = _s(lib.ct_ctx_last_message(ctx)) or _s(lib.ct_strerror(status))
    if what:
        msg = f"{what}: {msg}"
    if status == _CT_ERR_NOMEM:
        return MemoryError(msg)
    if status == _CT_ERR_INPUT:
        diags = [_s(lib.ct_ctx_diag_render(ctx, i)) for i in range(lib.ct_ctx_diag_count(ctx))]
        file, line, col = _s(lib.ct_ctx_last_file(ctx)), lib.ct_ctx_last_line(ctx), lib.ct_ctx_last_col(ctx)
        if diags:
            msg = "\n".join(diags)
            extra = lib.ct_ctx_diag_suppressed(ctx)
            if extra:
                msg += f"\n({extra} more errors not shown)"
        elif file and line:
            msg = f"{file}:{line}:{col}: error: {msg}"
        return KernelError(msg, status, file, line, col, diags)
    return CachetError(msg, status)


def _capture(write) -> Tuple[int, str]:
    """Run write(FILE *) on an in-memory stream (open_memstream) and return (status, text)."""
    buf = ffi.new("char **")
    size = ffi.new("size_t *")
    f = libc.open_memstream(buf, size)
    if f == ffi.NULL:
        raise MemoryError("open_memstream failed")
    try:
        st = write(f)
    finally:
        libc.fclose(f)
    try:
        text = ffi.unpack(buf[0], size[0]).decode("utf-8", "replace") if buf[0] != ffi.NULL else ""
    finally:
        libc.free(buf[0])
    return st, text


def _take_string(p) -> str:
    """A malloc'd C string returned by the library, as str, freed."""
    try:
        return _s(p)
    finally:
        if p != ffi.NULL:
            libc.free(p)


@dataclass(frozen=True)
class ArrayInfo:
    """One array of a kernel as the C API describes it."""
    name: str
    dtype: np.dtype
    role: str
    rank: int
    order: Tuple[int, ...]      # layout: dimensions most major first (row_major = 0, 1, ...)
    strided: bool               # declared `strided`: any positive strides are accepted
    extents: Tuple[str, ...]    # each dimension's extent as written in terms of params ("L+2")

    @property
    def written(self) -> bool:
        """The kernel writes it (output or inout)."""
        return self.role in ("output", "inout")


@dataclass
class RunResult:
    """What k.verify() measured (the fields of ct_run_result, as `cachet run --json`)."""
    seconds: float
    gflops: float
    verified: Optional[bool]    # None: not verified
    max_rel_error: float
    engine: str
    code_cache: str
    compile_seconds: float
    threads: int
    mismatch_array: str = ""


class _Extent:
    """An array dimension's extent: const + sum(coef[p] * value of runtime param p)."""

    __slots__ = ("const", "coefs")

    def __init__(self, const: int, coefs: Dict[int, int]):
        self.const = const
        self.coefs = coefs  # runtime param slot -> coefficient (non-zero only)

    def text(self, names: Sequence[str]) -> str:
        parts = []
        for p, c in self.coefs.items():
            parts.append(names[p] if c == 1 else f"{c}*{names[p]}")
        if self.const or not parts:
            parts.append(str(self.const))
        return "+".join(parts).replace("+-", "-")


class Kernel:
    """A .cachet kernel parsed and checked by libcachet, callable on numpy arrays.

    Kernel(text_or_path, params={...}, target=None, threads=None)

    text_or_path is the kernel's text (anything with a newline) or the path of
    a .cachet file (str or os.PathLike). params overrides compile-time params
    (as `cachet -D NAME=VALUE`) and may give runtime params a default value.
    target is "host", "opencl" or "cuda" (None: "host"); threads is the default
    number of threads of parallel loops, 0..4096 (None or 0: every core).
    Param values are ints (a float, bool or str is a TypeError). close()
    (or a `with` block) frees it; it cannot be pickled or copied.
    Raises KernelError (a ValueError) carrying file:line:col on bad text.

    Calling k(A=a, B=b) or k(a, b) runs the compiled kernel in place on the
    arrays (every array but the temps, in declaration order); see __call__.
    The compiled code comes from libcachet's code cache, shared with the
    cachet tool (same folder: $CACHET_CACHE_DIR, else ~/.cache/cachet).
    """

    def __init__(self, text_or_path: Union[str, os.PathLike], params: Optional[Mapping[str, int]] = None,
                 target: Optional[str] = None, threads: Optional[int] = None):
        if target is not None and target not in _TARGETS:
            raise ValueError(f"target must be {_or_list(_TARGETS)}, not {target!r}")
        self.target = target or "host"
        self.threads = _threads_arg("threads", threads, 0)
        life = self._life = _Life()
        self._user_cls = type(self)  # Kernel or a subclass of it: the generated __call__ derives from it
        self._handles = life.handles
        self._source, self.path = _read_source(text_or_path)
        ctx = lib.ct_ctx_new()
        if ctx == ffi.NULL:
            raise MemoryError("ct_ctx_new failed")
        self._ctx = ctx
        self._k = ffi.NULL
        self._finalizer = weakref.finalize(self, _release, life, [ctx, ffi.NULL])
        self._k = self._parse()
        self._finalizer.detach()
        self._finalizer = weakref.finalize(self, _release, life, [ctx, self._k])
        if params:
            self.set_params(params)
        self._describe()

    # ------------------------------------------------------------ construction

    def _parse(self):
        ctx = self._ctx
        if self._source is None:  # a file Python could not read: the library's message
            k = lib.ct_kernel_parse_file(ctx, os.fsencode(self.path))
        else:
            # the text read once, so that every parse (the shadow copy of _extents after set_params
            # too) sees the kernel this object was made from, even when the file changes later
            data = self._source
            k = lib.ct_kernel_parse(ctx, data, len(data), os.fsencode(self.path) if self.path else b"<string>")
        if k == ffi.NULL:
            st = lib.ct_ctx_last_status(ctx)
            raise _ctx_error(ctx, st or _CT_ERR_INPUT)
        return k

    def set_params(self, params: Mapping[str, int]) -> None:
        """Set params (compile-time ones are checked again; compiled handles are dropped).

        Unknown names and values the checks refuse raise KernelError; the
        kernel then keeps its previous values.
        """
        items = _param_items("set_params()", params)
        with self._lock:
            self._check_open()
            old = {n: v for n, v in self.params.items()} if hasattr(self, "_pnames") else {}
            changed = False
            for name, value in items:
                st = lib.ct_kernel_set_param(self._k, name.encode(), value)
                if st:
                    err = _ctx_error(self._ctx, st, f"param '{name}'")
                    self._restore(old)
                    raise err
                changed = True
            if changed:
                st = lib.ct_kernel_recheck(self._k)
                if st:
                    err = _ctx_error(self._ctx, st)
                    self._restore(old)
                    raise err
                self._drop_handles()
                if hasattr(self, "_pnames"):
                    self._describe()

    def _restore(self, old: Mapping[str, Optional[int]]) -> None:
        for name, value in old.items():
            if value is not None:
                lib.ct_kernel_set_param(self._k, name.encode(), value)
        lib.ct_kernel_recheck(self._k)
        lib.ct_ctx_clear_error(self._ctx)

    @property
    def _closed(self) -> bool:
        return self._life.closed

    @property
    def _lock(self) -> threading.RLock:
        return self._life.lock  # (a property: a child process after fork gets a new lock)

    @property
    def _inflight(self) -> List[None]:
        return self._life.inflight

    def _drop_handles(self) -> None:
        """Free the compiled handles (the lock held) once no call is running one."""
        self._life.h_default = None
        handles = list(self._handles.values())
        self._handles.clear()
        _wait_idle(self._inflight)
        for h in handles:
            lib.ct_callable_free(h)

    def _check_open(self) -> None:
        """Raise KernelError once close() has run (with the lock held: close takes it too)."""
        if self._closed:
            raise KernelError(f"kernel is closed: '{self.name}'" if hasattr(self, "name") else "kernel is closed",
                              _CT_ERR_USAGE)

    def _describe(self) -> None:
        """Read the kernel's arrays and params once; precompute what each call checks."""
        k = self._k
        self.name = _s(lib.ct_kernel_name(k))
        n = lib.ct_kernel_param_count(k)
        self._pnames = [_s(lib.ct_kernel_param_name(k, i)) for i in range(n)]
        self._runtime = [i for i in range(n) if lib.ct_kernel_param_is_runtime(k, i)]
        self.runtime_params: Tuple[str, ...] = tuple(self._pnames[i] for i in self._runtime)
        rt_names = list(self.runtime_params)
        extents = self._extents()
        order = ffi.new("int[]", 8)
        arrays, specs = [], []
        for i in range(lib.ct_kernel_array_count(k)):
            rank = lib.ct_kernel_array_order(k, i, order)
            info = ArrayInfo(
                name=_s(lib.ct_kernel_array_name(k, i)),
                dtype=_DTYPES[lib.ct_kernel_array_dtype(k, i)],
                role=_ROLES[lib.ct_kernel_array_role(k, i)],
                rank=rank,
                order=tuple(order[d] for d in range(rank)),
                strided=bool(lib.ct_kernel_array_is_strided(k, i)),
                extents=tuple(e.text(rt_names) for e in extents[i]),
            )
            arrays.append(info)
            if info.role != "temp":
                specs.append(_ArgSpec(info, extents[i]))
        self.arrays: Tuple[ArrayInfo, ...] = tuple(arrays)
        self._specs = specs
        self.args: Tuple[str, ...] = tuple(s.info.name for s in specs)
        self._slot = {s.info.name: j for j, s in enumerate(specs)}
        self._rt_slot = {name: j for j, name in enumerate(rt_names)}
        self._infer = _inference_plan(specs, len(rt_names))
        self._has_strided = any(s.info.strided for s in specs)
        gen = self._life.gen + 1
        self._fast, call = _fast_checker(specs, self._infer, len(rt_names), gen)
        # a class of its own whose __call__ has the kernel's checks inlined (the call is then ~1 us shorter)
        base = self._user_cls
        if base.__call__ is not Kernel.__call__:
            call = None  # a subclass's own __call__ stays
        cls = base if call is None else type(base.__name__, (base,), {"__call__": call, "__doc__": base.__doc__,
                                                                       "__module__": base.__module__,
                                                                       "__qualname__": base.__qualname__})
        if call is not None:
            call.__doc__ = Kernel.__call__.__doc__
        self.__class__ = cls
        # last: a call that read the previous generation and then got a handle of this one starts over
        self._life.gen = gen

    def _extents(self) -> List[List[_Extent]]:
        """Each array dimension's extent as an affine form of the runtime params.

        A shadow copy of the kernel is given probe values, so that this kernel
        keeps its runtime params unset (only the public C API is used).
        """
        k = self._k
        narr = lib.ct_kernel_array_count(k)
        if not self._runtime:
            return [[_Extent(lib.ct_kernel_array_extent(k, i, d), {})
                     for d in range(lib.ct_kernel_array_rank(k, i))] for i in range(narr)]
        shadow = self._parse()
        try:
            is_set, was = ffi.new("int *"), ffi.new("int *")
            for i in range(lib.ct_kernel_param_count(k)):
                v = lib.ct_kernel_param_value(k, i, is_set)
                if not lib.ct_kernel_param_is_runtime(k, i) and v != lib.ct_kernel_param_value(shadow, i, was):
                    lib.ct_kernel_set_param(shadow, lib.ct_kernel_param_name(k, i), v)
            lib.ct_kernel_recheck(shadow)
            names = [lib.ct_kernel_param_name(k, i) for i in self._runtime]
            for nm in names:
                lib.ct_kernel_set_param(shadow, nm, _PROBE_BASE)

            def read():
                return [[lib.ct_kernel_array_extent(shadow, i, d)
                         for d in range(lib.ct_kernel_array_rank(shadow, i))] for i in range(narr)]
            base = read()
            coefs = []
            for nm in names:
                lib.ct_kernel_set_param(shadow, nm, _PROBE_BASE + 1)
                moved = read()
                lib.ct_kernel_set_param(shadow, nm, _PROBE_BASE)
                coefs.append([[m - b for m, b in zip(mr, br)] for mr, br in zip(moved, base)])
        finally:
            lib.ct_kernel_free(shadow)
            lib.ct_ctx_clear_error(self._ctx)
        out = []
        for i in range(narr):
            dims = []
            for d in range(len(base[i])):
                cs = {p: coefs[p][i][d] for p in range(len(names)) if coefs[p][i][d]}
                const = base[i][d] - sum(c * _PROBE_BASE for c in cs.values())
                dims.append(_Extent(const, cs))
            out.append(dims)
        return out

    @classmethod
    def from_einsum(cls, spec: str, dtype: str = "f32", schedule: str = "", name: str = "einsum",
                    threads: Optional[int] = None) -> "Kernel":
        """A kernel for an einsum contraction: Out[out] += product of the operands.

        spec is numpy's explicit form ("ij,jk->ik", "bij,bjk->bik"); dtype
        one of f32, f64, i32, i64. The arrays are A0, A1, ... (inputs) and
        Out (inout, of at least one dimension): call k(a0, a1, ..., out)
        with out set to zeros for np.einsum's result (the kernel adds to
        it). Every letter becomes a runtime param D_<letter>, inferred from
        the shapes; the loops run over the output's letters, then the
        others, in order of first appearance. schedule: the text of a
        `schedule { ... }` body (the loop indices are the letters).
        """
        if not isinstance(spec, str):
            raise TypeError(f"einsum spec must be a str such as 'ij,jk->ik', not {type(spec).__name__}")
        if dtype not in _DTYPE_NAMES.values():
            raise ValueError(f"dtype must be one of f32, f64, i32, i64, not {dtype!r}")
        if "->" not in spec:
            raise ValueError(f"einsum spec {spec!r} needs an explicit output ('ij,jk->ik')")
        ins, out = spec.replace(" ", "").split("->")
        ops = ins.split(",")
        letters = [c for c in ins if c.isalpha()]
        for term in ops + [out]:
            if not term or not all(c.isalpha() and c.isascii() for c in term):
                raise ValueError(f"einsum spec {spec!r}: each operand is one or more letters")
        if len(set(out)) != len(out) or any(c not in letters for c in out):
            raise ValueError(f"einsum spec {spec!r}: the output's letters must be distinct and appear in an input")
        order = list(dict.fromkeys(list(out) + letters))
        lines = [f"kernel {name}"] + [f"param D_{c} : runtime" for c in order]
        for i, t in enumerate(ops):
            lines.append(f"array A{i} : {dtype}[{', '.join('D_' + c for c in t)}] input")
        lines.append(f"array Out : {dtype}[{', '.join('D_' + c for c in out)}] inout")
        lines.append(f"for ({', '.join(f'{c}: D_{c}' for c in order)}) {{")
        prod = " * ".join(f"A{i}[{', '.join(t)}]" for i, t in enumerate(ops))
        lines.append(f"  Out[{', '.join(out)}] += {prod}")
        lines.append("}")
        if schedule:
            lines.append("schedule {\n" + schedule.strip() + "\n}")
        return cls("\n".join(lines) + "\n", threads=threads)

    # ------------------------------------------------------------ description

    @property
    def params(self) -> Dict[str, Optional[int]]:
        """Every param's current value (None: a runtime param without a value)."""
        is_set = ffi.new("int *")
        out = {}
        with self._lock:
            self._check_open()
            for i, name in enumerate(self._pnames):
                v = lib.ct_kernel_param_value(self._k, i, is_set)
                out[name] = int(v) if is_set[0] else None
        return out

    @property
    def signature(self) -> str:
        """The call's signature: arrays (type, shape, role) and runtime params."""
        parts = [f"{s.info.name}: {_DTYPE_NAMES[_dt_code(s.info.dtype)]}[{', '.join(s.info.extents)}] {s.info.role}"
                 for s in self._specs]
        parts += [f"{p}: int" for p in self.runtime_params]
        return f"{self.name}({', '.join(parts)})"

    def __repr__(self) -> str:
        return f"<cachet.Kernel {self.signature}{' (closed)' if self._closed else ''}>"

    def __reduce__(self):
        raise TypeError("a cachet.Kernel cannot be pickled or copied (it holds a compiled library handle): "
                        "make a new one with cachet.Kernel(text_or_path, params=k.params, ...)")

    def __copy__(self):
        self.__reduce__()

    def __deepcopy__(self, memo):
        self.__reduce__()

    def __enter__(self) -> "Kernel":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def flops(self, **params: int) -> float:
        """Floating-point operations of one run (a multiply-add counts 2)."""
        with self._lock:
            self._check_open()
            self._set_runtime(params)
            return float(lib.ct_kernel_flops(self._k))

    # ------------------------------------------------------------ calling

    def compile(self, threads: Optional[int] = None):
        """Compile (or fetch from the code cache) the host code for `threads` threads.

        Done by the first call; call it to pay the compile before timing.
        """
        t = self.threads if threads is None else _threads_arg("threads", threads)
        h = self._handles.get(t)
        if h is not None:
            return h
        with self._lock:
            self._check_open()
            h = self._handles.get(t)
            if h is not None:
                return h
            if self.target != "host":
                what = _TARGET_KERNEL.get(self.target, f"a {self.target} kernel")
                raise CachetError(
                    f"kernel '{self.name}': calling {what} on numpy arrays is not supported "
                    "(ct_kernel_compile gives host code only); use k.verify() or k.build(dir)", 9)
            st = lib.ct_ctx_set_option(self._ctx, lib.CT_OPT_THREADS, t)
            if st:
                raise _ctx_error(self._ctx, st, "threads")
            h = lib.ct_kernel_compile(self._k)
            if h == ffi.NULL:
                raise _ctx_error(self._ctx, lib.ct_ctx_last_status(self._ctx) or 7,
                                 f"kernel '{self.name}'")
            self._handles[t] = h
            if t == self.threads:
                self._life.h_default = h
            return h

    def __call__(self, *arrays: np.ndarray, **named: Any) -> None:
        """Run the kernel once, in place, on numpy arrays.

        Arrays are given in declaration order (temps left out; see k.args) or
        by name; runtime params by name (k(X=x, Y=y, L=1000)) or inferred from
        the arrays' shapes. Each array must be a numpy.ndarray of the kernel's
        dtype (TypeError otherwise), of the declared shape, dense in the
        declared layout (row_major = C order, col_major = Fortran order),
        aligned, and writable when the kernel writes it (ValueError
        otherwise). An array declared `strided` may be any view with positive
        strides. An array the kernel writes must not share memory with
        another argument (ValueError: the result would be wrong). Nothing is
        ever copied: outputs are written in place. The GIL is released while
        the kernel runs. threads: threads of parallel loops for this call,
        0..4096 (default: Kernel(threads=...)). KernelError once closed.
        """
        # (a kernel whose runtime params some shape does not give; the others get a generated __call__)
        return self._call(arrays, self._pop_threads(named), named)

    def _failed(self, st: int, arrays: Optional[Sequence[Any]]) -> None:
        """Raise for a failed ct_callable_call: CT_ERR_USAGE on checked arrays is the library's overlap
        refusal, said precisely by the numpy check (which names both arrays)."""
        if st == _CT_ERR_USAGE and arrays is not None:
            self._check_overlap(arrays)
        raise _ctx_error(self._ctx, st, f"kernel '{self.name}'")

    def _check_overlap(self, vals: Sequence[Any]) -> None:
        """Refuse an array the kernel writes that shares memory with another argument (ValueError).

        The generated code declares its pointers restrict, so such a call would
        compute a wrong result silently. np.may_share_memory compares the
        arrays' bounds; when they meet, np.shares_memory decides exactly,
        within _OVERLAP_WORK steps (past them the arrays count as overlapping).
        Two inputs may share memory.
        """
        specs = self._specs
        for i, (si, a) in enumerate(zip(specs, vals)):
            if not si.written:
                continue
            for j, (sj, b) in enumerate(zip(specs, vals)):
                if j == i or (j < i and sj.written) or not np.may_share_memory(a, b):
                    continue
                try:
                    shared = np.shares_memory(a, b, max_work=_OVERLAP_WORK)
                except np.TooHardError:
                    shared = None
                if shared is False:
                    continue
                how = "shares memory with" if shared else "may share memory with (not decided within the bound)"
                raise ValueError(f"array '{si.info.name}' ({si.info.role}) {how} array '{sj.info.name}': "
                                 f"the kernel writes '{si.info.name}' while it reads the other, so the "
                                 f"result would be wrong; pass separate arrays (np.copy(...) of the input)")

    def _acquire(self, t: int):
        """The compiled handle for t threads, registered in self._inflight (the caller pops it).

        Registered before it is looked up: close() and set_params() clear the
        handles first and then wait for the registrations to end, so a handle
        found here stays alive until the pop.
        """
        while True:
            self._inflight.append(None)
            h = None if self._closed else self._handles.get(t)
            if h is not None:
                return h
            self._inflight.pop()
            self.compile(t)  # under the lock: raises once closed

    def _pop_threads(self, named: Dict[str, Any]) -> Optional[int]:
        """The call's threads= keyword, unless the kernel has an array or a runtime param named threads
        (its own names win: the thread count is then Kernel(threads=...)'s)."""
        if "threads" in self._slot or "threads" in self._rt_slot:
            return None
        return named.pop("threads", None)

    def _slow(self, pos: Tuple[Any, ...], named: Dict[str, Any]) -> None:
        """The generated __call__'s other calls (mixed, threads=, runtime params by name, ...): Kernel._call."""
        arrays = tuple(a for a in pos if a is not _MISSING)
        return self._call(arrays, self._pop_threads(named), named)

    def _call(self, arrays: Sequence[Any], threads: Optional[int], named: Dict[str, Any]) -> None:
        """Every call the short path did not take: named arguments, threads=, the first call, errors."""
        t = self.threads if threads is None else _threads_arg("threads", threads)
        gen = self._life.gen  # read before the checks: set_params may describe the kernel anew meanwhile
        again = (arrays, named)
        fast = self._fast
        if fast is not None:
            if named and not arrays and len(named) == len(self.args):
                try:
                    arrays = tuple(named[a] for a in self.args)
                    named = {}
                except KeyError:
                    pass
            if not named:
                h = self._acquire(t)
                try:
                    # a handle of another generation than the checks: start over (set_params ran)
                    st = fast(h, *arrays) if self._life.gen == gen else -2
                except Exception:
                    st = -1  # the checks below say what is wrong (or take the strided views)
                finally:
                    self._inflight.pop()
                if st == -2:
                    return self._call(again[0], threads, again[1])
                if st >= 0:
                    if st:
                        self._failed(st, arrays)
                    return
        specs = self._specs
        n = len(specs)
        if named:
            vals, rt = self._bind_named(arrays, named)
        else:
            if len(arrays) != n:
                self._bind_named(arrays, named)  # raises the TypeError
            vals, rt = arrays, None
        if self._infer is not None or rt:
            rt = self._runtime_values(vals, rt or {})
        ptrs = []
        try:
            for spec, a in zip(specs, vals):
                if type(a) is not np.ndarray or a.dtype != spec.dtype:
                    spec.check_type(a)
                want = spec.fixed_shape if spec.fixed_shape is not None else spec.shape(rt)
                if a.shape != want:
                    spec.check_shape(a, rt, self.runtime_params)
                phys = a if spec.perm is None else a.transpose(spec.perm)
                if not phys.flags.aligned:
                    spec.refuse_unaligned()
                ptrs.append(ffi.from_buffer(phys, require_writable=spec.written))
        except (BufferError, ValueError, TypeError) as e:
            if getattr(e, "_cachet", False):
                raise
            # not dense in the declared layout, or read-only: the strided path or a clear error
            return self._call_views(vals, rt, t, e)
        self._check_overlap(vals)
        if not self._run(ptrs, rt, t, gen):
            return self._call(again[0], threads, again[1])

    def _run(self, ptrs: List[Any], rt: Optional[List[int]], t: int, gen: int) -> bool:
        """Call the compiled handle on checked buffers (ptrs keeps them alive; the GIL is released).

        False (nothing run) when the handle is of another generation than the checks (set_params ran).
        """
        h = self._acquire(t)
        try:
            if self._life.gen != gen:
                return False
            st = lib.ct_callable_call(h, ptrs, rt if rt else ffi.NULL)
        finally:
            self._inflight.pop()
        if st:
            self._failed(st, None)
        return True

    def _bind_named(self, arrays: Sequence[Any], named: Mapping[str, Any]):
        """Map positional and keyword arguments to the array slots and runtime params."""
        specs = self._specs
        if len(arrays) > len(specs):
            raise TypeError(f"{self.name}() takes {len(specs)} arrays ({', '.join(self.args)}) "
                            f"but {len(arrays)} were given")
        vals: List[Any] = list(arrays) + [None] * (len(specs) - len(arrays))
        rt: Dict[str, int] = {}
        for key, v in named.items():
            j = self._slot.get(key)
            if j is not None:
                if vals[j] is not None:
                    raise TypeError(f"{self.name}() got array '{key}' twice (by position and by name)")
                vals[j] = v
            elif key in self._rt_slot:
                if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
                    raise TypeError(f"runtime param '{key}' must be an int, not {type(v).__name__}")
                rt[key] = int(v)
            elif key in self._pnames:
                raise TypeError(f"'{key}' is a compile-time param of kernel '{self.name}': "
                                f"set it with Kernel(..., params={{'{key}': ...}}) or k.set_params()")
            else:
                raise TypeError(f"{self.name}() got an unexpected argument '{key}' "
                                f"(arrays: {', '.join(self.args) or 'none'}; runtime params: "
                                f"{', '.join(self.runtime_params) or 'none'})")
        missing = [s.info.name for s, v in zip(specs, vals) if v is None]
        if missing:
            raise TypeError(f"{self.name}() is missing array{'s' if len(missing) > 1 else ''} "
                            f"{', '.join(repr(m) for m in missing)}")
        return vals, rt

    def _runtime_values(self, vals: Sequence[Any], given: Mapping[str, int]) -> List[int]:
        """Values of the runtime params: given by name, else inferred from shapes, else defaults."""
        names = self.runtime_params
        out: List[Optional[int]] = [given.get(nm) for nm in names]
        for p, slot, dim, ext in (self._infer or ()):
            if out[p] is not None:
                continue
            a = vals[slot]
            spec = self._specs[slot]
            spec.check_type(a)
            if a.ndim != len(spec.extents):
                spec._fail(ValueError, f"array '{spec.info.name}' must have {len(spec.extents)} dimension"
                                       f"{'s' if len(spec.extents) > 1 else ''}, not {a.ndim}")
            rest = sum(c * out[q] for q, c in ext.coefs.items() if q != p)
            num = a.shape[dim] - ext.const - rest
            c = ext.coefs[p]
            if num % c or num // c < 1:
                spec._fail(ValueError,
                    f"array '{spec.info.name}' has extent {a.shape[dim]} in dimension {dim}, which no value "
                    f"of runtime param '{names[p]}' gives (extent {ext.text(names)}, {names[p]} >= 1)")
            out[p] = num // c
        if any(v is None for v in out):
            defaults = self.params
            for i, nm in enumerate(names):
                if out[i] is None:
                    out[i] = defaults[nm]
            missing = [nm for nm, v in zip(names, out) if v is None]
            if missing:
                raise TypeError(f"{self.name}(): runtime param{'s' if len(missing) > 1 else ''} "
                                f"{', '.join(missing)} cannot be inferred from the arrays' shapes: "
                                f"give {'them' if len(missing) > 1 else 'it'} by name")
        for nm, v in zip(names, out):
            if v < 1:
                raise ValueError(f"runtime param '{nm}' is {v} (it must be at least 1)")
        return out  # type: ignore[return-value]

    def _call_views(self, vals, rt, threads, cause) -> None:
        """Arrays not dense in their layout: declared-`strided` ones run through ct_kernel_run_views."""
        views_needed = False
        for spec, a in zip(self._specs, vals):
            spec.check_type(a)
            if a.shape != (spec.fixed_shape if spec.fixed_shape is not None else spec.shape(rt)):
                spec.check_shape(a, rt, self.runtime_params)
            if spec.dense_error(a) is None:
                continue
            if not spec.info.strided:
                raise ValueError(spec.dense_error(a)) from None
            spec.check_strides(a)
            views_needed = True
        if not views_needed:
            raise cause
        self._check_overlap(vals)
        if self.target != "host":
            self.compile(threads)  # raises the device target's refusal
        with self._lock:
            self._check_open()
            self._set_runtime(dict(zip(self.runtime_params, rt or ())))
            tensors = []
            try:
                views = ffi.new("ct_tensor *[]", lib.ct_kernel_array_count(self._k))
                j = 0
                for i, info in enumerate(self.arrays):
                    if info.role == "temp":
                        continue
                    t = self._tensor(self._specs[j], vals[j])
                    tensors.append(t)
                    views[i] = t
                    j += 1
                o = ffi.new("ct_run_options *")
                lib.ct_run_options_init(o)
                o.threads = threads
                st = lib.ct_kernel_run_views(self._k, views, o)
                if st:
                    raise _ctx_error(self._ctx, st, f"kernel '{self.name}'")
            finally:
                for t in tensors:
                    lib.ct_tensor_free(t)

    def _tensor(self, spec: "_ArgSpec", a: np.ndarray):
        """A ct_tensor over a's memory: strided (any positive strides) or dense in the layout."""
        item = a.itemsize
        code = _dt_code(spec.info.dtype)
        ext = ffi.new("int64_t[]", list(a.shape))
        ptr = ffi.cast("void *", a.__array_interface__["data"][0])
        if spec.info.strided:
            strides = [s // item for s in a.strides]
            span = 1 + sum((e - 1) * s for e, s in zip(a.shape, strides))
            t = lib.ct_tensor_new_strided(self._ctx, ptr, span, code, a.ndim, ext,
                                          ffi.new("int64_t[]", strides), 0)
        else:
            t = lib.ct_tensor_new_ordered(self._ctx, ptr, code, a.ndim, ext,
                                          ffi.new("int[]", list(spec.info.order)))
        if t == ffi.NULL:
            raise _ctx_error(self._ctx, lib.ct_ctx_last_status(self._ctx), f"array '{spec.info.name}'")
        return t

    def _set_runtime(self, params: Mapping[str, int]) -> None:
        """Give runtime params their values (the lock held): ints of at least 1, checked before any is set."""
        checked = []
        for name, v in params.items():
            if name not in self._pnames:
                raise TypeError(f"kernel '{self.name}' has no param '{name}'")
            if name not in self._rt_slot:
                raise TypeError(f"'{name}' is a compile-time param: use k.set_params() or Kernel(params=...)")
            checked.append((name, _int_arg(f"runtime param '{name}'", v, 1, _INT64_MAX)))
        for name, v in checked:
            st = lib.ct_kernel_set_param(self._k, name.encode(), v)
            if st:
                raise _ctx_error(self._ctx, st, f"param '{name}'")

    # ------------------------------------------------------------ the cachet tool's verbs

    def lower(self, json_output: bool = False, schedule: bool = True) -> Union[str, dict]:
        """The scheduled loop tree as pseudo-code (`cachet lower`), or its JSON as a dict."""
        with self._lock:
            self._check_open()
            t = lib.ct_kernel_lower(self._k, 1 if schedule else 0)
            if t == ffi.NULL:
                raise _ctx_error(self._ctx, lib.ct_ctx_last_status(self._ctx))
            try:
                text = _take_string(lib.ct_looptree_to_string(t, lib.CT_FORMAT_JSON if json_output else lib.CT_FORMAT_TEXT))
            finally:
                lib.ct_looptree_free(t)
        return json.loads(text) if json_output else text

    def emit(self, target: Optional[str] = None) -> str:
        """The generated source (`cachet emit`): C for "host", OpenCL C for "opencl", CUDA C for "cuda"."""
        if target is not None and not isinstance(target, str):
            raise TypeError(f"target must be a str ({_or_list(_TARGETS)}) or None, not {type(target).__name__}")
        tgt = (target or self.target).encode()
        with self._lock:
            self._check_open()
            p = lib.ct_kernel_emit(self._k, tgt, ffi.NULL)
            if p == ffi.NULL:
                raise _ctx_error(self._ctx, lib.ct_ctx_last_status(self._ctx))
            return _take_string(p)

    def verify(self, repeat: int = 1, threads: Optional[int] = None, engine: str = "native",
               check: bool = True, **params: int) -> RunResult:
        """Run on deterministic inputs and compare with the reference interpreter (`cachet run`).

        params gives runtime params their values. A mismatch returns a
        RunResult with verified False (the wrong binary is evicted from the
        code cache by the library); other failures raise.
        """
        if engine not in ("native", "interp"):
            raise ValueError(f"engine must be 'native' or 'interp', not {engine!r}")
        with self._lock:
            self._check_open()
            self._set_runtime(params)
            o = ffi.new("ct_run_options *")
            lib.ct_run_options_init(o)
            o.engine = 0 if engine == "native" else 1
            o.repeat = _int_arg("repeat", repeat, 1, 1000000)
            o.threads = self.threads if threads is None else _threads_arg("threads", threads)
            o.verify = 1 if check else 0
            r = ffi.new("ct_run_result *")
            st = lib.ct_kernel_run(self._k, o, r)
            if st and st != 7:  # CT_ERR_VERIFY fills r
                raise _ctx_error(self._ctx, st, f"kernel '{self.name}'")
            return RunResult(seconds=r.seconds, gflops=r.gflops,
                             verified=None if r.verified < 0 else bool(r.verified),
                             max_rel_error=r.max_rel_error, engine=_s(r.engine),
                             code_cache=_s(r.code_cache), compile_seconds=r.compile_seconds,
                             threads=r.threads, mismatch_array=_s(r.mismatch_array))

    def simulate(self, cache: Optional[str] = None, **params: int) -> dict:
        """Exact LRU simulation of the address trace (`cachet simulate --json`).

        cache: "SIZE:LINE[:WAYS],..." (None: this machine's caches).
        """
        with self._lock:
            self._check_open()
            self._set_runtime(params)
            r = ffi.new("ct_sim_result *")
            st = lib.ct_kernel_simulate(self._k, _cache_arg(cache), r)
            if st:
                raise _ctx_error(self._ctx, st, f"kernel '{self.name}'")
            try:
                levels = [{"size": r.level[i].size, "line": r.level[i].line, "ways": r.level[i].ways,
                           "simulated_misses": r.level[i].misses} for i in range(r.nlevels)]
                refs = [{"array": _s(r.refs[i].array), "stmt": r.refs[i].stmt, "write": bool(r.refs[i].is_write),
                         "misses": [r.refs[i].misses[lv] for lv in range(r.nlevels)]} for i in range(r.nrefs)]
                return {"kernel": self.name, "accesses": r.accesses, "levels": levels,
                        "simulate_seconds": r.seconds, "references": refs}
            finally:
                lib.ct_sim_result_free(r)

    def predict(self, cache: Optional[str] = None, **params: int) -> dict:
        """The analytical model's misses per level and per array (`cachet predict --json`)."""
        with self._lock:
            self._check_open()
            self._set_runtime(params)
            r = ffi.new("ct_predict_result *")
            st = lib.ct_kernel_predict(self._k, _cache_arg(cache), r)
            if st:
                raise _ctx_error(self._ctx, st, f"kernel '{self.name}'")
            try:
                levels = [{"size": r.level[i].size, "line": r.level[i].line, "ways": r.level[i].ways,
                           "misses": r.level[i].misses, "exact": bool(r.level[i].exact),
                           "source": _PREDICT_SOURCES[r.source[i]]}
                          for i in range(r.nlevels)]
                for i, lv in enumerate(levels):
                    if 0 < r.fallback[i] < len(_PREDICT_FALLBACKS):
                        lv["fallback"] = _PREDICT_FALLBACKS[r.fallback[i]]
                refs = [{"array": _s(a.array), "stmt": a.stmt, "nrefs": a.nrefs, "exact": bool(a.exact),
                         "accesses": a.accesses, "misses": [a.misses[lv] for lv in range(r.nlevels)]}
                        for a in (r.arrays[i] for i in range(r.narrays))]
                return {"kernel": self.name, "accesses": r.accesses, "levels": levels,
                        "model_seconds": r.seconds, "references": refs}
            finally:
                lib.ct_predict_result_free(r)

    def tiles(self, cache: Optional[str] = None, max_tile: int = 0, keep: int = 0,
              max_evals: int = 0, **params: int) -> dict:
        """The model's tile-size search (`cachet tiles --json`): candidates best first.

        Each candidate's "tiles" are in the order of "params":
        dict(zip(r["params"], r["candidates"][0]["tiles"])) is the best tiling.
        A kernel with affine loop bounds has every tiling counted by the exact
        simulator ("source": "simulator", "fallback": "affine loop bounds").
        """
        with self._lock:
            self._check_open()
            self._set_runtime(params)
            o = ffi.new("ct_tiles_options *")
            lib.ct_tiles_options_init(o)
            o.max_tile = _int_arg("max_tile", max_tile, 0, _INT64_MAX)
            o.keep, o.max_evals = _int_arg("keep", keep, 0, 1 << 30), _int_arg("max_evals", max_evals, 0, 1 << 30)
            r = ffi.new("ct_tiles_result *")
            st = lib.ct_kernel_tiles(self._k, _cache_arg(cache), o, r)
            if st:
                raise _ctx_error(self._ctx, st, f"kernel '{self.name}'")
            try:
                names = [_s(r.params[i]) for i in range(r.nindices)]
                cands = []
                for c in (r.candidates[i] for i in range(r.ncandidates)):
                    cands.append({"tiles": [c.tiles[i] for i in range(r.nindices)],
                                  "misses": c.misses_max[r.rank_level],
                                  "level_misses": [c.misses[lv] for lv in range(r.nlevels)],
                                  "level_misses_max": [c.misses_max[lv] for lv in range(r.nlevels)],
                                  "exact": bool(c.exact)})
                res = {"kernel": self.name, "indices": [_s(r.indices[i]) for i in range(r.nindices)],
                        "params": names,
                        "levels": [{"size": r.level[i].size, "line": r.level[i].line, "ways": r.level[i].ways}
                                   for i in range(r.nlevels)],
                        "rank_level": r.rank_level, "runtime_bounds": bool(r.runtime_bounds),
                        "evaluated": r.evaluated,
                        # affine loop bounds: every tiling counted by the exact simulator
                        "source": "simulator" if r.simulated else "model",
                        "fallback": "affine loop bounds" if r.simulated else None}
                if r.simulated:
                    res.update({"accesses": r.accesses, "simulate_seconds": r.simulate_seconds,
                                "seconds_per_tiling": r.simulate_seconds / r.evaluated if r.evaluated else 0.0})
                res.update({"candidates": cands, "seconds": r.seconds})
                return res
            finally:
                lib.ct_tiles_result_free(r)

    def auto(self, threads: Optional[int] = None, budget: float = 0.0, cache: Optional[str] = None,
             **params: int) -> str:
        """A schedule and a plan chosen for this kernel (`cachet auto`, docs/AUTO.md).

        Returns the whole .cachet text: the kernel as written, then a
        commented schedule and plan chosen from its nests, this machine's
        description and the cache model, for the kernel's current sizes
        (params gives runtime params their values). A schedule or plan the
        kernel has is kept. threads: the threads the plan is for (None: the
        kernel's); budget: 0 (model only, nothing measured) or seconds in
        which the tuner measures the tile sizes. Run it with
        cachet.Kernel(k.auto()).
        """
        budget = _real_arg("budget", budget)
        with self._lock:
            self._check_open()
            self._set_runtime(params)
            o = ffi.new("ct_auto_options *")
            lib.ct_auto_options_init(o)
            o.threads = self.threads if threads is None else _threads_arg("threads", threads)
            o.budget = budget
            keep = None
            if cache:
                keep = ffi.new("char[]", _cache_arg(cache))
                o.cache_spec = keep
            out = ffi.new("char **")
            st = lib.ct_kernel_autoschedule(self._k, o, out, ffi.NULL)
            if st:
                raise _ctx_error(self._ctx, st, f"kernel '{self.name}'")
            return _take_string(out[0])

    def tune(self, sizes: Optional[Iterable[Union[str, Sequence[int], Mapping[str, int]]]] = None,
             budget: float = 60.0, cache: Optional[str] = None, threads: Optional[int] = None,
             store_dir: Optional[str] = None, no_store: bool = False, fraction: float = 0.0) -> List[dict]:
        """Tune the tunable params (`cachet tune --json`), once per size set.

        sizes: size sets, each "64x64x64", a sequence of the size params'
        values in order, or a dict {name: value} (None: the current sizes).
        The budget (seconds) is shared evenly by the sets. Each result is the
        JSON of ct_tune_print as a dict, plus "best_params" (the winner's
        values, for Kernel(..., params=...)). The winner is written to the
        tuning store shared with the cachet tool unless no_store. The
        kernel's params are left as they were.
        """
        if isinstance(sizes, (str, Mapping)):
            sizes = [sizes]  # one size set, not the characters or the names of one
        sets = list(sizes) if sizes is not None else [None]
        if not sets:
            raise ValueError("sizes is empty")
        budget = _real_arg("budget", budget, positive=True)
        fraction = _real_arg("fraction", fraction)
        if fraction > 1:
            raise ValueError(f"fraction is {fraction}: it must be in 0..1 (0: measure until the budget ends)")
        if threads is not None:
            threads = _threads_arg("threads", threads)
        if cache is not None and not isinstance(cache, str):
            raise TypeError(f"cache must be a str such as '32K:64,1M:64:16' or None, not {type(cache).__name__}")
        if store_dir is not None and not isinstance(store_dir, (str, os.PathLike)):
            raise TypeError(f"store_dir must be a path or None, not {type(store_dir).__name__}")
        with self._lock:
            self._check_open()
            saved = {n: v for n, v in self.params.items() if v is not None and n in self._size_params()}
            try:
                out = []
                for s in sets:
                    if s is not None:
                        self._apply_sizes(s)
                    out.append(self._tune_one(budget / len(sets), cache, threads, store_dir, no_store,
                                              fraction))
                return out
            finally:
                for name, v in saved.items():
                    lib.ct_kernel_set_param(self._k, name.encode(), v)
                lib.ct_kernel_recheck(self._k)

    def _size_params(self) -> List[str]:
        fam = ffi.new("char[]", 128)
        cls = ffi.new("char[]", 512)
        st = lib.ct_kernel_tune_key(self._k, fam, 128, cls, 512, ffi.NULL)
        if st:
            raise _ctx_error(self._ctx, st)
        text = _s(cls)
        return [part.split("=")[0] for part in text.split(":") if part]

    def _apply_sizes(self, s) -> None:
        names = self._size_params()
        if isinstance(s, Mapping):
            values = dict(_param_items(f"size set {s!r}", s))
        else:
            if isinstance(s, str):
                if not re.fullmatch(r"[0-9]+(x[0-9]+)*", s):
                    raise ValueError(f"size set {s!r} is not values joined by 'x' such as '64x64x64' "
                                     f"(one per size param: {', '.join(names)})")
                seq = [int(x) for x in s.split("x")]
            else:
                seq = [_int_arg(f"size set {s!r}", x, 1, _INT64_MAX) for x in s]
            if len(seq) != len(names):
                raise ValueError(f"size set {s!r} is not one value per size param ({', '.join(names)})")
            values = dict(zip(names, seq))
        for name, v in values.items():
            if v < 1 or v > _INT64_MAX:
                raise ValueError(f"size set {s!r}: '{name}' is {v} (it must be at least 1)")
            st = lib.ct_kernel_set_param(self._k, name.encode(), v)
            if st:
                raise _ctx_error(self._ctx, st, f"param '{name}'")
        st = lib.ct_kernel_recheck(self._k)
        if st:
            raise _ctx_error(self._ctx, st)

    def _tune_one(self, budget, cache, threads, store_dir, no_store, fraction) -> dict:
        o = ffi.new("ct_tune_options *")
        lib.ct_tune_options_init(o)
        o.budget = budget
        o.fraction = fraction
        keep = []
        if cache:
            keep.append(ffi.new("char[]", cache.encode()))
            o.cache_spec = keep[-1]
        if store_dir:
            keep.append(ffi.new("char[]", os.fsencode(store_dir)))
            o.store_dir = keep[-1]
        o.no_store = 1 if no_store else 0
        o.threads = self.threads if threads is None else int(threads)
        r = ffi.new("ct_tune_result *")
        st = lib.ct_tune(self._k, o, r)
        if st:
            raise _ctx_error(self._ctx, st, f"kernel '{self.name}'")
        try:
            st, text = _capture(lambda f: lib.ct_tune_print(r, lib.CT_FORMAT_JSON, f))
            res = json.loads(text)
            if r.best >= 0:
                best = r.candidates[r.best]
                res["best_params"] = {_s(r.params[i]): best.values[i] for i in range(r.nparams)}
            else:
                res["best_params"] = None
            return res
        finally:
            lib.ct_tune_result_free(r)

    def build(self, directory: Union[str, os.PathLike]) -> Dict[str, str]:
        """Build the ahead-of-time package (`cachet build -o DIR`): NAME.h, libNAME.a/.so, NAME.c
        (and NAME.cl or NAME.cu, the device code of an OpenCL or CUDA kernel).

        Returns the paths of the files written, by kind.
        """
        if not isinstance(directory, (str, os.PathLike)):
            raise TypeError(f"build() takes a folder path, not {type(directory).__name__}")
        d = os.fspath(directory)
        with self._lock:
            self._check_open()
            st = lib.ct_kernel_build(self._k, os.fsencode(d))
            if st:
                raise _ctx_error(self._ctx, st, f"kernel '{self.name}'")
        files = {"header": f"{self.name}.h", "static": f"lib{self.name}.a",
                 "shared": f"lib{self.name}.so", "source": f"{self.name}.c",
                 "opencl": f"{self.name}.cl", "cuda": f"{self.name}.cu"}
        return {kind: os.path.join(d, f) for kind, f in files.items() if os.path.exists(os.path.join(d, f))}

    def close(self) -> None:
        """Free the compiled handles, the kernel and its ctx now (also done when k is collected).

        Calls running in other threads finish first (close waits for them);
        every later use of k raises KernelError("kernel is closed"). Closing
        twice does nothing. `with cachet.Kernel(...) as k:` closes at the end.
        """
        self._finalizer()  # _release: marks k closed, waits for the calls in flight, then frees


class _Life:
    """What a Kernel shares with its finalizer (which must not hold the Kernel itself).

    closed: close() ran (or the finalizer, at exit with other threads still
    calling); h_default: the handle for Kernel(threads=...) the short call
    path uses (None until compiled); inflight: one entry per call running a
    handle outside the lock (list.append and .pop are atomic under the GIL);
    close() and set_params() clear the handles, then wait for it to empty.
    """

    __slots__ = ("lock", "handles", "h_default", "inflight", "closed", "gen", "__weakref__")

    def __init__(self):
        self.lock = threading.RLock()
        self.handles: Dict[int, Any] = {}
        self.h_default = None
        self.inflight: List[None] = []
        self.closed = False
        self.gen = 0  # bumped by each _describe: the checks a call made belong to one generation
        _LIVES.add(self)

    def after_fork(self) -> None:
        """In a child process only the forking thread lives: calls the others had in flight, and the
        lock they may have held, are not there (else close() and every verb would wait forever)."""
        self.lock = threading.RLock()
        self.inflight.clear()


_LIVES: "weakref.WeakSet[_Life]" = weakref.WeakSet()


def _after_fork_in_child() -> None:
    for life in list(_LIVES):
        life.after_fork()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def _wait_idle(inflight: List[None]) -> None:
    """Wait until no call runs a compiled handle (calls only register for the length of one kernel run)."""
    pause = 0.00005
    while inflight:
        time.sleep(pause)
        pause = min(pause * 2, 0.005)


def _release(life: _Life, objs: List[Any]) -> None:
    """close(), collection or exit: mark the kernel closed, wait for the calls running, then free in
    the order the C API asks for: callables, then the kernel, then its ctx."""
    with life.lock:  # verbs and compiles finish first; later ones see closed
        life.closed = True
        life.h_default = None  # calls starting now take the general path, which sees closed
        _wait_idle(life.inflight)
        for h in list(life.handles.values()):
            lib.ct_callable_free(h)
        life.handles.clear()
    ctx, k = objs
    if k != ffi.NULL:
        lib.ct_kernel_free(k)
    lib.ct_ctx_free(ctx)


def _int_arg(what: str, v: Any, lo: int, hi: int) -> int:
    """v as an int in lo..hi: TypeError for a bool, float, str or None, ValueError out of range."""
    if isinstance(v, (bool, np.bool_)):
        raise TypeError(f"{what} must be an int, not bool")
    try:
        n = operator.index(v)
    except TypeError:
        raise TypeError(f"{what} must be an int, not {type(v).__name__}"
                        f"{' (a float is not truncated)' if isinstance(v, (float, np.floating)) else ''}") from None
    if n < lo or n > hi:
        raise ValueError(f"{what} is {n}: it must be in {lo}..{hi}" if hi < _INT64_MAX else
                         f"{what} is {n}: it must be at least {lo}" if n < lo else
                         f"{what} is {n}: it must fit in 64 bits (at most {hi})")
    return n


def _threads_arg(what: str, v: Any, default: Optional[int] = None) -> int:
    """A thread count: 0 (one per processor) .. 4096, as CT_OPT_THREADS takes; None gives default."""
    if v is None and default is not None:
        return default
    return _int_arg(what, v, 0, _MAX_THREADS)


def _real_arg(what: str, v: Any, positive: bool = False) -> float:
    """A finite number (>= 0, or > 0 when positive): TypeError for a non-number, ValueError otherwise."""
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, float, np.integer, np.floating)):
        raise TypeError(f"{what} must be a number, not {type(v).__name__}")
    x = float(v)
    if not math.isfinite(x) or x < 0 or (positive and x == 0):
        raise ValueError(f"{what} is {v}: it must be a finite number {'> 0' if positive else '>= 0'}")
    return x


def _param_items(what: str, params: Any) -> List[Tuple[str, int]]:
    """A mapping of param names to ints, checked (TypeError/ValueError name the param)."""
    if not isinstance(params, Mapping):
        raise TypeError(f"{what} takes a mapping of param names to ints, not {type(params).__name__}")
    out = []
    for name, v in params.items():
        if not isinstance(name, str):
            raise TypeError(f"{what}: param names are str, not {type(name).__name__} ({name!r})")
        out.append((name, _int_arg(f"param '{name}'", v, -_INT64_MAX - 1, _INT64_MAX)))
    return out


def _cache_arg(cache: Any):
    """A cache spec for the C API: bytes, or NULL for None (this machine's caches)."""
    if cache is None or cache == "":
        return ffi.NULL
    if not isinstance(cache, str):
        raise TypeError(f"cache must be a str such as '32K:64,1M:64:16' or None, not {type(cache).__name__}")
    return cache.encode()


def _dt_code(dt: np.dtype) -> int:
    for code, d in _DTYPES.items():
        if d == dt:
            return code
    raise TypeError(dt)


_MAX_TEXT = 64 << 20  # LANG_MAX_TEXT (src/lang/lang.h): the library refuses longer kernel text


def _read_source(src) -> Tuple[Optional[bytes], Optional[str]]:
    """(text, path): a path-like or a string without a newline names a file, read now.

    text is None for a file Python cannot read (ct_kernel_parse_file then says why).
    """
    if isinstance(src, bytes) and b"\n" not in src:
        src = os.fsdecode(src)  # a path given as bytes
    if isinstance(src, os.PathLike) or (isinstance(src, str) and "\n" not in src):
        path = os.fspath(src)
        if isinstance(path, bytes):
            path = os.fsdecode(path)
        if not os.path.exists(path):
            raise FileNotFoundError(f"no kernel file {path!r} (kernel text must contain a newline)")
        try:
            with open(path, "rb") as f:
                return f.read(_MAX_TEXT + 1), path
        except OSError:
            return None, path
    if isinstance(src, str):
        return src.encode("utf-8"), None
    if isinstance(src, bytes):
        return src, None
    raise TypeError(f"Kernel() takes kernel text or a path, not {type(src).__name__}")


def load(path: Union[str, os.PathLike], params: Optional[Mapping[str, int]] = None,
         target: Optional[str] = None, threads: Optional[int] = None) -> Kernel:
    """Parse the .cachet file at path: Kernel(path, params, target, threads)."""
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"load() takes a path, not {type(path).__name__}")
    p = os.fspath(path)
    if not os.path.exists(p):
        raise FileNotFoundError(f"no kernel file {p!r}")
    return Kernel(os.path.abspath(p) if "\n" in p else p, params=params, target=target, threads=threads)


class _ArgSpec:
    """What a call checks about one array argument (precomputed per kernel)."""

    def __init__(self, info: ArrayInfo, extents: List[_Extent]):
        self.info = info
        self.dtype = info.dtype
        self.written = info.written
        self.extents = extents
        ident = tuple(range(info.rank))
        self.perm = None if info.order == ident else info.order
        rt_free = all(not e.coefs for e in extents)
        self.fixed_shape = tuple(e.const for e in extents) if rt_free else None

    def shape(self, rt: Sequence[int]) -> Tuple[int, ...]:
        return tuple(e.const + sum(c * rt[p] for p, c in e.coefs.items()) for e in self.extents)

    def _fail(self, exc_type, msg):
        e = exc_type(msg)
        e._cachet = True  # a diagnosis, not a buffer failure to fall back from
        raise e

    def check_type(self, a) -> None:
        name = self.info.name
        if not isinstance(a, np.ndarray):
            kind = type(a).__name__ if type(a).__module__ == "builtins" else f"{type(a).__module__}.{type(a).__name__}"
            self._fail(TypeError, f"array '{name}' must be a numpy.ndarray of {self.dtype}, not {kind}"
                                  f"{' (a scalar: pass np.array([x]) or an array of the declared shape)' if np.isscalar(a) else ''}")
        if isinstance(a, np.ma.MaskedArray):
            self._fail(TypeError, f"array '{name}' is a masked array: the kernel would ignore its mask; "
                                  f"pass a.filled(...) or a.data")
        if a.dtype != self.dtype:
            self._fail(TypeError, f"array '{name}' must have dtype {self.dtype} "
                                  f"({_DTYPE_NAMES[_dt_code(self.dtype)]} in the kernel), not {a.dtype}")

    def check_shape(self, a, rt, names) -> None:
        want = self.fixed_shape if self.fixed_shape is not None else self.shape(rt)
        text = ", ".join(e.text(names) for e in self.extents)
        if a.ndim != len(want):
            self._fail(ValueError, f"array '{self.info.name}' must have {len(want)} dimension"
                                   f"{'s' if len(want) > 1 else ''} [{text}], not {a.ndim}")
        shown = "" if self.fixed_shape is not None else f" = [{text}]"
        self._fail(ValueError, f"array '{self.info.name}' must have shape {want}{shown}, not {a.shape}")

    def refuse_unaligned(self) -> None:
        self._fail(ValueError, f"array '{self.info.name}' is not aligned to its {self.dtype.itemsize}-byte "
                               f"elements (the kernel needs aligned data: np.require(a, requirements='A'))")

    def dense_error(self, a: np.ndarray) -> Optional[str]:
        """Why a cannot be passed as it is (None: it can)."""
        name = self.info.name
        if self.written and not a.flags.writeable:
            return f"array '{name}' is read-only but the kernel writes it ({self.info.role})"
        phys = a if self.perm is None else a.transpose(self.perm)
        if phys.flags.c_contiguous:
            return None
        layout = {None: "row_major, numpy C order"}.get(self.perm)
        if layout is None:
            layout = ("col_major, numpy Fortran order" if self.perm == tuple(reversed(range(self.info.rank)))
                      else f"layout={self.info.order}")
        fix = ("np.ascontiguousarray" if self.perm is None else
               "np.asfortranarray" if "Fortran" in layout else "a dense copy")
        hint = (f"pass {fix}(...) for an input" if not self.written else
                "a copy would lose the kernel's writes, so pass a dense array")
        return (f"array '{name}' is not dense in its declared layout ({layout}; strides {a.strides}); "
                f"{hint}, or declare the array `strided` in the kernel")

    def check_strides(self, a: np.ndarray) -> None:
        name, item = self.info.name, a.itemsize
        if self.written and not a.flags.writeable:
            self._fail(ValueError, f"array '{name}' is read-only but the kernel writes it ({self.info.role})")
        if not a.flags.aligned:
            self.refuse_unaligned()
        for d, s in enumerate(a.strides):
            if a.shape[d] == 1:
                continue
            if s < 0:
                self._fail(ValueError, f"array '{name}' has a negative stride {s} in dimension {d} "
                                       f"(strided arrays take strides >= 0): pass a view with positive strides")
            if s % item:
                self._fail(ValueError, f"array '{name}' has stride {s} in dimension {d}, "
                                       f"not a multiple of its {item}-byte elements")
            if s == 0 and self.written:
                self._fail(ValueError, f"array '{name}' repeats elements (stride 0 in dimension {d}) "
                                       f"but the kernel writes it")
        if self.written:
            # no two indices may reach one element: with the strides sorted, each must step past
            # everything the smaller ones reach (sufficient; a rare interleaving that passes it is refused)
            reach = item
            for st, ext in sorted((st, ext) for st, ext in zip(a.strides, a.shape) if ext > 1):
                if st < reach:
                    self._fail(ValueError, f"array '{name}' overlaps itself (shape {a.shape}, strides {a.strides}): "
                                           f"the kernel writes it, and two of its indices would reach one element")
                reach += st * (ext - 1)


def _inference_plan(specs: Sequence[_ArgSpec], nrt: int):
    """Which array dimension gives each runtime param, in an order where each needs only known ones.

    None when the kernel has no runtime params.
    """
    if not nrt:
        return None
    known: set = set()
    plan = []
    progress = True
    while progress and len(known) < nrt:
        progress = False
        for slot, spec in enumerate(specs):
            for dim, ext in enumerate(spec.extents):
                unknown = [p for p in ext.coefs if p not in known]
                if len(unknown) == 1:
                    p = unknown[0]
                    plan.append((p, slot, dim, ext))
                    known.add(p)
                    progress = True
    return plan


def _fast_checker(specs: Sequence[_ArgSpec], plan, nrt: int, gen: int = 0):
    """Functions specialised to one kernel: (fast, call), or (None, None).

    fast(h, arrays...) checks positional arrays and calls handle h, raising
    on anything unusual (wrong type, dtype, shape, layout, alignment,
    writability); call(self, arrays...) is the same inlined into a
    __call__ that also takes every array by name and falls back to Kernel._call, which says precisely what is wrong or runs
    declared-`strided` views. None when some runtime param cannot be read
    off a shape (it must be named).

    The checks are written for speed (per-call overhead is the point of
    this function): one `if` per kind of check, shapes unpacked into locals
    (a wrong rank fails the unpacking), runtime params read straight from
    the unpacked extents, one flags attribute per array (`behaved` =
    aligned and writeable for written arrays, `aligned` for the others),
    C-contiguity of the (layout-permuted) array left to ffi.from_buffer,
    which refuses anything else. Every local and global of the generated
    code starts with `_ct_`, so that arrays' names never shadow them.
    """
    if nrt and (plan is None or len({p for p, *_ in plan}) < nrt):
        return None, None
    n = len(specs)
    env: Dict[str, Any] = {"_ct_ndarray": np.ndarray, "_ct_from_buffer": ffi.from_buffer, "_ct_NULL": ffi.NULL,
                           "_ct_c_call": lib.ct_callable_call, "_M": _MISSING}
    src = {(slot, dim): (p, ext) for p, slot, dim, ext in (plan or ())}
    # each array dimension's local: the runtime param itself when the extent is exactly that param
    dim_var: Dict[Tuple[int, int], str] = {}
    direct = set()
    for (slot, dim), (p, ext) in src.items():
        if ext.const == 0 and ext.coefs == {p: 1}:
            dim_var[(slot, dim)] = f"_ct_v{p}"
            direct.add(p)
    body: List[str] = []
    # 1. exact type and dtype (numpy's dtype singletons make `is` the usual answer; == for an equal one)
    conds = []
    for i, spec in enumerate(specs):
        env[f"_ct_dt{i}"] = spec.dtype
        conds.append(f"type(_ct_a{i}) is not _ct_ndarray or (_ct_a{i}.dtype is not _ct_dt{i} "
                     f"and _ct_a{i}.dtype != _ct_dt{i})")
    if conds:
        body.append(f"if {' or '.join(conds)}: raise TypeError")
    # 2. shapes unpacked (a wrong rank raises ValueError here)
    fixed = []
    for i, spec in enumerate(specs):
        rank = len(spec.extents)
        if spec.fixed_shape is not None:
            fixed.append(f"_ct_a{i}.shape != {spec.fixed_shape!r}")
            continue
        names = [dim_var.get((i, d), f"_ct_e{i}_{d}") for d in range(rank)]
        body.append(f"{', '.join(names)}{',' if rank == 1 else ''} = _ct_a{i}.shape")
    # 3. runtime params that are not an extent by themselves, in the plan's order
    for p, slot, dim, ext in (plan or ()):
        if p in direct:
            continue
        rest = "".join(f" - {c} * _ct_v{q}" for q, c in ext.coefs.items() if q != p)
        num = f"_ct_e{slot}_{dim}{f' - {ext.const}' if ext.const else ''}{rest}"
        c = ext.coefs[p]
        if c == 1:
            body.append(f"_ct_v{p} = {num}")
        else:
            body.append(f"_ct_v{p}, _ct_r = divmod({num}, {c})")
            body.append("if _ct_r: raise ValueError")
    # 4. every param >= 1, every other extent equal to its formula, the fixed shapes
    checks = [f"_ct_v{p} < 1" for p in range(nrt)]
    for i, spec in enumerate(specs):
        if spec.fixed_shape is not None:
            continue
        for d, e in enumerate(spec.extents):
            if (i, d) in src:
                continue  # the extent a param was read from (exactly: divmod's remainder is checked)
            terms = [f"_ct_v{q}" if c == 1 else f"{c} * _ct_v{q}" for q, c in e.coefs.items()]
            if e.const or not terms:
                terms.append(str(e.const))
            checks.append(f"_ct_e{i}_{d} != {' + '.join(terms)}")
    checks += fixed
    # 5. the layout's C-order view; alignment and (written arrays) writability
    for i, spec in enumerate(specs):
        if spec.perm is None:
            continue
        rev = spec.perm == tuple(reversed(range(len(spec.perm))))
        body.append(f"_ct_b{i} = _ct_a{i}.{'T' if rev else f'transpose({spec.perm})'}")
    phys = [f"_ct_a{i}" if spec.perm is None else f"_ct_b{i}" for i, spec in enumerate(specs)]
    checks += [f"not {b}.flags.{'behaved' if spec.written else 'aligned'}" for b, spec in zip(phys, specs)]
    if checks:
        body.append(f"if {' or '.join(checks)}: raise ValueError")
    bufs = ", ".join(f"_ct_from_buffer({b})" for b in phys)
    rts = ", ".join(f"_ct_v{p}" for p in range(nrt))
    body.append(f"_ct_st = _ct_c_call(_ct_h, [{bufs}], {('[' + rts + ']') if nrt else '_ct_NULL'})")
    args = [f"_ct_a{i}" for i in range(n)]
    lines = [f"def fast(_ct_h{''.join(', ' + a for a in args)}):"]
    lines += ["    " + b for b in body] + ["    return _ct_st"]
    # the __call__: positional arrays or every array by name, the default handle compiled; else Kernel._call
    # (through _slow). Names are looked up in **named only when no array came by position (keyword-only
    # parameters would cost every positional call a lookup of their defaults). The call is registered in
    # _inflight from before the handle is read until the C call returns, so that close() and set_params()
    # never free a handle in use; the general path runs after the registration ends (it may take the lock).
    names = [s.info.name for s in specs]
    by_name = bool(n) and "threads" not in names
    params = "".join(f", {a}=_M" for a in args)
    argt = f"({''.join(a + ', ' for a in args)})"
    lines += [f"def call(_ct_self{params}, *_ct_more, **_ct_named):",
              "    _ct_life = _ct_self._life",
              "    _ct_in = _ct_life.inflight",
              "    _ct_st = -1",
              "    try:",
              "        _ct_in.append(None)",
              # the handle only if the kernel is still of the generation these checks were made for
              f"        _ct_h = _ct_life.h_default if _ct_life.gen == {gen} else None",
              f"        if _ct_h is None or _ct_more or _ct_named or {f'_ct_a{n - 1} is _M' if n else 'False'}:"]
    if by_name:
        lines += [f"            if _ct_h is not None and _ct_a0 is _M and not _ct_more and len(_ct_named) == {n}:",
                  f"                {', '.join(args)}{',' if n == 1 else ''} = "
                  f"{', '.join(f'_ct_named[{nm!r}]' for nm in names)}{',' if n == 1 else ''}",
                  "                _ct_named = {}",
                  "            else:",
                  "                _ct_h = None"]
    else:
        lines += ["            _ct_h = None"]
    lines += ["        if _ct_h is not None:"]
    lines += ["            " + b for b in body]
    lines += ["    except Exception:",
              "        _ct_st = -1",
              "    finally:",
              "        _ct_in.pop()",
              "    if _ct_st:",
              "        if _ct_st < 0:",
              f"            return _ct_self._slow({argt} + _ct_more, _ct_named)",
              f"        _ct_self._failed(_ct_st, {argt})"]
    env["__source__"] = "\n".join(lines)
    exec(env["__source__"], env)
    return env["fast"], env["call"]


class _Missing:
    """The default of an array not given by position."""

    def __repr__(self) -> str:
        return "<missing>"


_MISSING = _Missing()
