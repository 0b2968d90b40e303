"""bulkscore from Python: the C ABI (include/bulkscore/bulkscore.h) through
ctypes, standard library only.

    import bulkscore
    engine = bulkscore.Engine(backend="cpu")
    engine.load(nodes_json, pods_json, objects_json)
    result = engine.schedule(pod_json)      # a dict-like Result
    engine.add_pod(bound_pod_json)          # the informer confirms it

The library is found at $BULKSCORE_LIB, else as "libbulkscore.so.1" on the
loader's path. Kubernetes objects go in as JSON text or bytes (or a dict,
which is serialized). Failures raise bulkscore.Error (subclasses by status:
NotFound, AlreadyExists, WrongState, InvalidInput...). An Engine serializes
its own calls with a lock; close() frees it (also on garbage collection, or
at the end of a `with` block).
"""

import ctypes
import json as _json
import os
import threading

_lib = ctypes.CDLL(os.environ.get("BULKSCORE_LIB") or "libbulkscore.so.1")

ABI_VERSION = 1

_c_char_p = ctypes.c_char_p
_size_t = ctypes.c_size_t


class _Options(ctypes.Structure):
    _fields_ = [
        ("backend", _c_char_p),
        ("tie_break", ctypes.c_int),
        ("seed", ctypes.c_uint64),
        ("threads", ctypes.c_int),
        ("batching", ctypes.c_int),
        ("batch_states", ctypes.c_uint32),
        ("assumed_pod_ttl_seconds", ctypes.c_double),
        ("executor", ctypes.c_void_p),
    ]


class _ScheduleResult(ctypes.Structure):
    _fields_ = [
        ("pod", _c_char_p),
        ("node", _c_char_p),
        ("score", ctypes.c_int64),
        ("feasible_nodes", ctypes.c_uint32),
        ("code", ctypes.c_int),
        ("code_name", _c_char_p),
        ("message", _c_char_p),
        ("devices", ctypes.POINTER(ctypes.c_int32)),
        ("num_devices", _size_t),
        ("device_group", _c_char_p),
        ("warnings", ctypes.POINTER(_c_char_p)),
        ("num_warnings", _size_t),
        ("json", _c_char_p),
        ("nominated_node", _c_char_p),
        ("victims", ctypes.POINTER(_c_char_p)),
        ("num_victims", _size_t),
        ("pdb_violations", ctypes.c_int64),
        ("pod_group", _c_char_p),
        ("group_outcome", _c_char_p),
        ("group_domain", _c_char_p),
    ]


class _ScheduleResults(ctypes.Structure):
    _fields_ = [("results", ctypes.POINTER(ctypes.POINTER(_ScheduleResult))), ("count", _size_t)]


class _RankedNode(ctypes.Structure):
    _fields_ = [
        ("node", _c_char_p),
        ("total", ctypes.c_int64),
        ("raw", ctypes.POINTER(ctypes.c_int64)),
        ("weighted", ctypes.POINTER(ctypes.c_int64)),
    ]


class _Rejection(ctypes.Structure):
    _fields_ = [("plugin", _c_char_p), ("reason", _c_char_p), ("nodes", ctypes.c_uint64)]


class _Ranking(ctypes.Structure):
    _fields_ = [
        ("pod", _c_char_p),
        ("plugins", ctypes.POINTER(_c_char_p)),
        ("num_plugins", _size_t),
        ("nodes", ctypes.POINTER(_RankedNode)),
        ("num_nodes", _size_t),
        ("evaluated_nodes", ctypes.c_uint32),
        ("feasible_nodes", ctypes.c_uint32),
        ("tied_at_best", ctypes.c_uint32),
        ("chosen", _c_char_p),
        ("rejections", ctypes.POINTER(_Rejection)),
        ("num_rejections", _size_t),
        ("message", _c_char_p),
        ("json", _c_char_p),
    ]


def _sig(name, restype, *argtypes):
    f = getattr(_lib, name)
    f.restype = restype
    f.argtypes = list(argtypes)
    return f


_E = ctypes.c_void_p
_last_error = _sig("bs_last_error", _c_char_p)
_status_name = _sig("bs_status_name", _c_char_p, ctypes.c_int)
_version = _sig("bs_version", _c_char_p)
_abi_version = _sig("bs_abi_version", ctypes.c_int)
_free = _sig("bs_free", None, ctypes.c_void_p)
_executor_create = _sig("bs_executor_create", ctypes.c_int, ctypes.c_uint, ctypes.POINTER(ctypes.c_void_p))
_executor_destroy = _sig("bs_executor_destroy", None, ctypes.c_void_p)
_options_init = _sig("bs_engine_options_init", None, ctypes.POINTER(_Options))
_create = _sig("bs_engine_create", ctypes.c_int, _c_char_p, _size_t, ctypes.POINTER(_Options), ctypes.POINTER(_E))
_destroy = _sig("bs_engine_destroy", None, _E)
_backend = _sig("bs_engine_backend", _c_char_p, _E)
_load = _sig("bs_engine_load", ctypes.c_int, _E, _c_char_p, _size_t, _c_char_p, _size_t, _c_char_p, _size_t)
_take_warnings = _sig("bs_engine_take_warnings", ctypes.c_int, _E, ctypes.POINTER(ctypes.POINTER(_c_char_p)),
                      ctypes.POINTER(_size_t))
_json_calls = {
    name: _sig("bs_engine_" + name, ctypes.c_int, _E, _c_char_p, _size_t)
    for name in ("add_node", "update_node", "add_pod", "update_pod", "assume_pod", "add_object", "update_object")
}
_name_calls = {
    name: _sig("bs_engine_" + name, ctypes.c_int, _E, _c_char_p)
    for name in ("remove_node", "remove_pod", "forget_pod", "finish_binding", "remove_pending_pod")
}
_is_assumed = _sig("bs_engine_is_assumed_pod", ctypes.c_int, _E, _c_char_p, ctypes.POINTER(ctypes.c_int))
_remove_object = _sig("bs_engine_remove_object", ctypes.c_int, _E, _c_char_p, _c_char_p, _c_char_p)
_schedule = _sig("bs_engine_schedule", ctypes.c_int, _E, _c_char_p, _size_t, ctypes.POINTER(ctypes.POINTER(_ScheduleResult)))
_peek = _sig("bs_engine_peek", ctypes.c_int, _E, _c_char_p, _size_t, ctypes.POINTER(ctypes.POINTER(_ScheduleResult)))
_result_free = _sig("bs_schedule_result_free", None, ctypes.POINTER(_ScheduleResult))
_schedule_all = _sig("bs_engine_schedule_all", ctypes.c_int, _E, _c_char_p, _size_t,
                     ctypes.POINTER(ctypes.POINTER(_ScheduleResults)))
_results_free = _sig("bs_schedule_results_free", None, ctypes.POINTER(_ScheduleResults))
_pod_group_status = _sig("bs_engine_pod_group_status", ctypes.c_int, _E, _c_char_p, _size_t, _c_char_p, _size_t,
                         ctypes.POINTER(ctypes.c_void_p))
_rank = _sig("bs_engine_rank", ctypes.c_int, _E, _c_char_p, _size_t, ctypes.c_uint32, ctypes.POINTER(ctypes.POINTER(_Ranking)))
_ranking_free = _sig("bs_ranking_free", None, ctypes.POINTER(_Ranking))
_metrics = _sig("bs_engine_metrics_text", ctypes.c_int, _E, ctypes.POINTER(ctypes.c_void_p))
_set_window = _sig("bs_engine_set_window", ctypes.c_int, _E, ctypes.c_uint32)
_set_node_filters = _sig("bs_engine_set_node_filters", ctypes.c_int, _E, _c_char_p, ctypes.POINTER(_c_char_p),
                         ctypes.POINTER(ctypes.c_int), ctypes.POINTER(_c_char_p), _size_t)
_set_node_scores = _sig("bs_engine_set_node_scores", ctypes.c_int, _E, _c_char_p, ctypes.POINTER(_c_char_p),
                        ctypes.POINTER(ctypes.c_int64), _size_t)
_clear_node_data = _sig("bs_engine_clear_node_data", ctypes.c_int, _E, _c_char_p, _c_char_p)

if _abi_version() != ABI_VERSION:
    raise ImportError("bulkscore: libbulkscore's ABI version %d, this module speaks %d" % (_abi_version(), ABI_VERSION))


class Error(Exception):
    """A failed call: .status (an int bs_status), .status_name, .message."""

    def __init__(self, status, message):
        self.status = status
        self.status_name = _status_name(status).decode()
        self.message = message
        super().__init__("%s: %s" % (self.status_name, message))


class InvalidInput(Error):
    pass


class AlreadyExists(Error):
    pass


class NotFound(Error):
    pass


class WrongState(Error):
    pass


class BackendUnavailable(Error):
    pass


_ERRORS = {1: InvalidInput, 2: AlreadyExists, 3: NotFound, 4: WrongState, 5: BackendUnavailable}

TIE_BREAK = {"random": 0, "first": 1}
BATCHING = {"exact": 0, "upstream": 1, "off": 2}


def version():
    return _version().decode()


def _check(status):
    # ctypes releases the GIL but runs the call and this read on the same
    # OS thread: bs_last_error is the call's.
    if status != 0:
        raise _ERRORS.get(status, Error)(status, _last_error().decode("utf-8", "replace"))


def _bytes(obj):
    if obj is None:
        return None
    if isinstance(obj, (dict, list)):
        obj = _json.dumps(obj)
    if isinstance(obj, str):
        obj = obj.encode()
    return bytes(obj)


def _str(p):
    return p.decode("utf-8", "replace") if p is not None else ""


class Executor:
    """A thread pool several engines share (threads 0: one per core; 1: every
    job on its caller's thread). Engines keep it alive as they need it."""

    def __init__(self, threads=0):
        self._h = ctypes.c_void_p()
        _check(_executor_create(threads, ctypes.byref(self._h)))

    def close(self):
        if self._h:
            _executor_destroy(self._h)
            self._h = ctypes.c_void_p()

    def __del__(self):
        self.close()


class Result(dict):
    """One decision: pod, node ("" when not placed), score, feasibleNodes,
    code, codeName, message, devices, deviceGroup, warnings, json; and
    nominatedNode ("" when the pod did not preempt), victims (namespace/name,
    sorted) and pdbViolations (DefaultPreemption); podGroup (a gang member's
    group key) and groupOutcome ("admitted", "rejected"; both "" for a pod in
    no gang); groupDomain ("key=value" for a topology-aware gang admitted in
    one domain, else "")."""

    __getattr__ = dict.get


class Engine:
    def __init__(self, config_yaml=None, backend="auto", tie_break="random", seed=0, threads=0,
                 batching="exact", batch_states=1, assumed_pod_ttl_seconds=0.0, executor=None):
        o = _Options()
        _options_init(ctypes.byref(o))
        o.backend = backend.encode()
        o.tie_break = TIE_BREAK[tie_break]
        o.seed = seed
        o.threads = threads
        o.batching = BATCHING[batching]
        o.batch_states = batch_states
        o.assumed_pod_ttl_seconds = assumed_pod_ttl_seconds
        if executor is not None:
            o.executor = executor._h
        cfg = _bytes(config_yaml)
        self._lock = threading.Lock()
        self._h = _E()
        _check(_create(cfg, len(cfg) if cfg else 0, ctypes.byref(o), ctypes.byref(self._h)))

    def close(self):
        with self._lock:
            if self._h:
                _destroy(self._h)
                self._h = _E()

    def __del__(self):
        if getattr(self, "_h", None):
            _destroy(self._h)
            self._h = _E()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    @property
    def backend(self):
        with self._lock:
            return _str(_backend(self._h))

    def load(self, nodes, pods, objects=None):
        n, p, o = _bytes(nodes), _bytes(pods), _bytes(objects)
        with self._lock:
            _check(_load(self._h, n, len(n), p, len(p), o, len(o) if o else 0))

    def _json_call(self, name, obj):
        b = _bytes(obj)
        with self._lock:
            _check(_json_calls[name](self._h, b, len(b)))

    def _name_call(self, name, key):
        with self._lock:
            _check(_name_calls[name](self._h, key.encode()))

    def add_node(self, node): self._json_call("add_node", node)
    def update_node(self, node): self._json_call("update_node", node)
    def remove_node(self, name): self._name_call("remove_node", name)
    def add_pod(self, pod): self._json_call("add_pod", pod)
    def update_pod(self, pod): self._json_call("update_pod", pod)
    def remove_pod(self, key): self._name_call("remove_pod", key)
    # The informer's delete of a pod that is not bound: it stops counting as
    # pending in the metrics (NotFound when no failed attempt of it counts).
    def remove_pending_pod(self, key): self._name_call("remove_pending_pod", key)
    def assume_pod(self, pod): self._json_call("assume_pod", pod)
    def forget_pod(self, key): self._name_call("forget_pod", key)
    def finish_binding(self, key): self._name_call("finish_binding", key)
    def add_object(self, obj): self._json_call("add_object", obj)
    def update_object(self, obj): self._json_call("update_object", obj)

    # Pod groups: a Workload's podGroups go together; the two PodGroup
    # resources are removed as "PodGroup.scheduling.k8s.io" and
    # "PodGroup.scheduling.x-k8s.io" (a plain "PodGroup" is InvalidArgument).
    def remove_object(self, kind, namespace, name):
        with self._lock:
            _check(_remove_object(self._h, kind.encode(), (namespace or "").encode(), name.encode()))

    def is_assumed_pod(self, key):
        out = ctypes.c_int()
        with self._lock:
            _check(_is_assumed(self._h, key.encode(), ctypes.byref(out)))
        return out.value == 1

    @staticmethod
    def _result(c):
        return Result(pod=_str(c.pod), node=_str(c.node), score=c.score, feasibleNodes=c.feasible_nodes,
                      code=c.code, codeName=_str(c.code_name), message=_str(c.message),
                      devices=[c.devices[i] for i in range(c.num_devices)], deviceGroup=_str(c.device_group),
                      warnings=[_str(c.warnings[i]) for i in range(c.num_warnings)], json=_str(c.json),
                      nominatedNode=_str(c.nominated_node),
                      victims=[_str(c.victims[i]) for i in range(c.num_victims)],
                      pdbViolations=c.pdb_violations, podGroup=_str(c.pod_group),
                      groupOutcome=_str(c.group_outcome), groupDomain=_str(c.group_domain))

    def _decide(self, fn, pod):
        b = _bytes(pod)
        r = ctypes.POINTER(_ScheduleResult)()
        with self._lock:
            _check(fn(self._h, b, len(b), ctypes.byref(r)))
        try:
            return self._result(r.contents)
        finally:
            _result_free(r)

    def schedule_all(self, pods):
        """The pending pods of a PodList in queue order, gangs all or nothing
        (docs/plugins.md, "Pod groups"): one Result per pod, in the list's
        order. A pod the engine refuses raises; the pods before it in queue
        order keep their placements."""
        b = _bytes(pods)
        r = ctypes.POINTER(_ScheduleResults)()
        with self._lock:
            _check(_schedule_all(self._h, b, len(b), ctypes.byref(r)))
        try:
            c = r.contents
            return [self._result(c.results[i].contents) for i in range(c.count)]
        finally:
            _results_free(r)

    def pod_group_status(self, pod, pending=None):
        """The pod's group as schedule_all would find it now with `pending` (a
        PodList; the pod among them if it is pending) still to schedule, as
        explain shows it: a dict (name, api, minField, min, placed, pending,
        rejection: None or the early rejection's message), None for a pod in
        no gang."""
        b, l = _bytes(pod), _bytes(pending)
        p = ctypes.c_void_p()
        with self._lock:
            _check(_pod_group_status(self._h, b, len(b), l, len(l) if l else 0, ctypes.byref(p)))
        try:
            return _json.loads(ctypes.string_at(p).decode())
        finally:
            _free(p)

    def schedule(self, pod):
        """Filter, score, select and assume the pod."""
        return self._decide(_schedule, pod)

    def peek(self, pod):
        """schedule's decision now; nothing assumed."""
        return self._decide(_peek, pod)

    def rank(self, pod, k=10):
        """The k best feasible nodes now, with their scores; nothing assumed."""
        b = _bytes(pod)
        r = ctypes.POINTER(_Ranking)()
        with self._lock:
            _check(_rank(self._h, b, len(b), k, ctypes.byref(r)))
        try:
            c = r.contents
            plugins = [_str(c.plugins[i]) for i in range(c.num_plugins)]
            nodes = []
            for i in range(c.num_nodes):
                n = c.nodes[i]
                nodes.append({"node": _str(n.node), "total": n.total,
                              "raw": [n.raw[j] for j in range(c.num_plugins)],
                              "weighted": [n.weighted[j] for j in range(c.num_plugins)]})
            rejections = [{"plugin": _str(c.rejections[i].plugin), "reason": _str(c.rejections[i].reason),
                           "nodes": c.rejections[i].nodes} for i in range(c.num_rejections)]
            return Result(pod=_str(c.pod), plugins=plugins, nodes=nodes, evaluatedNodes=c.evaluated_nodes,
                          feasibleNodes=c.feasible_nodes, tiedAtBest=c.tied_at_best, chosen=_str(c.chosen),
                          rejections=rejections, message=_str(c.message), json=_str(c.json))
        finally:
            _ranking_free(r)

    # NodeData's columns (docs/plugins.md): per-node verdicts and scores of the
    # embedder's own rules. A column is made by its first set.
    def set_node_filter(self, column, node, passes, reason=""):
        """The node passes, or fails with `reason` ("": "node(s) didn't pass <column>")."""
        self.set_node_filters(column, [(node, passes, reason)])

    def set_node_filters(self, column, values):
        """Several nodes at once, all or nothing: (node, passes[, reason]) tuples."""
        values = [tuple(v) + ("",) * (3 - len(v)) for v in values]
        n = len(values)
        nodes = (_c_char_p * max(n, 1))(*[v[0].encode() for v in values])
        passes = (ctypes.c_int * max(n, 1))(*[1 if v[1] else 0 for v in values])
        reasons = (_c_char_p * max(n, 1))(*[(v[2] or "").encode() for v in values])
        with self._lock:
            _check(_set_node_filters(self._h, column.encode(), nodes, passes, reasons, n))

    def set_node_score(self, column, node, score):
        """The node's score, 0..100."""
        self.set_node_scores(column, {node: score})

    def set_node_scores(self, column, scores):
        """Several nodes at once, all or nothing: a dict node -> score (or (node, score) pairs)."""
        items = list(scores.items()) if isinstance(scores, dict) else [tuple(v) for v in scores]
        n = len(items)
        nodes = (_c_char_p * max(n, 1))(*[k.encode() for k, _ in items])
        values = (ctypes.c_int64 * max(n, 1))(*[v for _, v in items])
        with self._lock:
            _check(_set_node_scores(self._h, column.encode(), nodes, values, n))

    def clear_node_data(self, column, node=None):
        """The node's entry removed (node None: every node's)."""
        with self._lock:
            _check(_clear_node_data(self._h, column.encode(), node.encode() if node is not None else None))

    def take_warnings(self):
        lst = ctypes.POINTER(_c_char_p)()
        count = _size_t()
        with self._lock:
            _check(_take_warnings(self._h, ctypes.byref(lst), ctypes.byref(count)))
        try:
            return [_str(lst[i]) for i in range(count.value)]
        finally:
            _free(lst)

    def set_window(self, n):
        """Windows of pods for schedule_all (docs/batching.md, "Windows of
        pods"): the next n ordinary pods evaluated together ahead of their
        turn; 0 (the default) is auto (two per thread, 8 to 64, on a CPU
        backend of four threads or more, while it pays), 1 none. Decisions
        do not depend on it."""
        with self._lock:
            _check(_set_window(self._h, n))

    def metrics_text(self):
        p = ctypes.c_void_p()
        with self._lock:
            _check(_metrics(self._h, ctypes.byref(p)))
        try:
            return ctypes.string_at(p).decode()
        finally:
            _free(p)
