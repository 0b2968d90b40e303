// Package bulkscore is the Go binding of bulkscore's C ABI
// (include/bulkscore/bulkscore.h): kube-scheduler v1.35.4's scheduling
// cycle in bulk, fed by informer events, from a Go scheduler.
//
// Build against an installed bulkscore (cmake --install) with
//
//	CGO_CFLAGS="-I<prefix>/include" CGO_LDFLAGS="-L<prefix>/lib -Wl,-rpath,<prefix>/lib"
//
// (the test does the same against a build tree). Kubernetes objects go in as JSON, as
// client-go's typed objects marshal (encoding/json): a missing "kind" is
// fine for pods and nodes; objects (Services, Namespaces...) need it.
//
// An Engine serializes its own calls (a mutex), so goroutines may share it;
// calls on one engine do not run in parallel. Close frees it; a finalizer
// frees a forgotten one.
package bulkscore

/*
#cgo LDFLAGS: -lbulkscore
#include <stdlib.h>
#include <bulkscore/bulkscore.h>
*/
import "C"

import (
	"encoding/json"
	"fmt"
	"runtime"
	"sync"
	"time"
	"unsafe"
)

// Status is a bs_status code.
type Status int

const (
	OK                 Status = C.BS_OK
	InvalidInput       Status = C.BS_INVALID_INPUT
	AlreadyExists      Status = C.BS_ALREADY_EXISTS
	NotFound           Status = C.BS_NOT_FOUND
	WrongState         Status = C.BS_WRONG_STATE
	BackendUnavailable Status = C.BS_BACKEND_UNAVAILABLE
	DeviceError        Status = C.BS_DEVICE_ERROR
	OutOfMemory        Status = C.BS_OUT_OF_MEMORY
	InvalidArgument    Status = C.BS_INVALID_ARGUMENT
	Internal           Status = C.BS_INTERNAL
)

func (s Status) String() string { return C.GoString(C.bs_status_name(C.int(s))) }

// Error is a failed call: its status and the library's message.
type Error struct {
	Status  Status
	Message string
}

func (e *Error) Error() string { return fmt.Sprintf("bulkscore: %s: %s", e.Status, e.Message) }

// Is lets errors.Is(err, bulkscore.ErrNotFound) match by status.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Message == "" && t.Status == e.Status
}

// Sentinels for errors.Is.
var (
	ErrInvalidInput       = &Error{Status: InvalidInput}
	ErrAlreadyExists      = &Error{Status: AlreadyExists}
	ErrNotFound           = &Error{Status: NotFound}
	ErrWrongState         = &Error{Status: WrongState}
	ErrBackendUnavailable = &Error{Status: BackendUnavailable}
)

// TieBreak picks among nodes tied at the best total.
type TieBreak int

const (
	TieBreakRandom TieBreak = C.BS_TIE_BREAK_RANDOM // upstream's: a seeded uniform draw per pod
	TieBreakFirst  TieBreak = C.BS_TIE_BREAK_FIRST  // the first node in the node list
)

// Batching is the batch cache's mode (docs/batching.md).
type Batching int

const (
	BatchingExact    Batching = C.BS_BATCHING_EXACT
	BatchingUpstream Batching = C.BS_BATCHING_UPSTREAM
	BatchingOff      Batching = C.BS_BATCHING_OFF
)

// Executor is a thread pool that several engines share (docs/library.md,
// "Threads"). Engines keep it alive as long as they need it: Close it when
// you make no more engines with it.
type Executor struct {
	h *C.bs_executor
}

// NewExecutor makes a pool of threads (0: one per core; 1: every job on its
// caller's thread).
func NewExecutor(threads uint) (*Executor, error) {
	x := &Executor{}
	if err := call(func() C.int { return C.bs_executor_create(C.uint(threads), &x.h) }); err != nil {
		return nil, err
	}
	runtime.SetFinalizer(x, (*Executor).Close)
	return x, nil
}

// Close releases the handle (engines made with it keep the pool).
func (x *Executor) Close() {
	if x.h != nil {
		C.bs_executor_destroy(x.h)
		x.h = nil
	}
	runtime.SetFinalizer(x, nil)
}

// Options of an engine; the zero value is not the default: use DefaultOptions.
type Options struct {
	Backend       string // "auto", "cpu", "cuda"
	TieBreak      TieBreak
	Seed          uint64
	Threads       int // CPU backend workers; 0: one per core
	Batching      Batching
	BatchStates   uint32
	AssumedPodTTL time.Duration // 0: assumed pods never expire (upstream's default)
	Executor      *Executor     // nil: a pool of Threads of the engine's own
}

// DefaultOptions: backend auto, random tie-break, exact batching.
func DefaultOptions() Options {
	return Options{Backend: "auto", TieBreak: TieBreakRandom, Batching: BatchingExact, BatchStates: 1}
}

// Version is the library's version, e.g. "0.1.0".
func Version() string { return C.GoString(C.bs_version()) }

// ABIVersion is the C ABI's version the library was built with.
func ABIVersion() int { return int(C.bs_abi_version()) }

// Engine owns a C engine.
type Engine struct {
	mu sync.Mutex
	h  *C.bs_engine
}

// call runs f with this goroutine pinned to its OS thread, so that the
// thread-local bs_last_error belongs to the call.
func call(f func() C.int) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	st := f()
	if st == C.BS_OK {
		return nil
	}
	return &Error{Status: Status(st), Message: C.GoString(C.bs_last_error())}
}

// cbytes passes b to C for the duration of a call (a C copy: cgo forbids
// Go pointers to Go pointers, and the library does not keep it).
func cbytes(b []byte) (*C.char, C.size_t, func()) {
	if len(b) == 0 {
		return nil, 0, func() {}
	}
	p := C.CBytes(b)
	return (*C.char)(p), C.size_t(len(b)), func() { C.free(p) }
}

// NewEngine makes an engine for a KubeSchedulerConfiguration (YAML; nil:
// upstream's default profile).
func NewEngine(configYAML []byte, opts Options) (*Engine, error) {
	var o C.bs_engine_options
	C.bs_engine_options_init(&o)
	backend := C.CString(opts.Backend)
	defer C.free(unsafe.Pointer(backend))
	if opts.Backend != "" {
		o.backend = backend
	}
	o.tie_break = C.int(opts.TieBreak)
	o.seed = C.uint64_t(opts.Seed)
	o.threads = C.int(opts.Threads)
	o.batching = C.int(opts.Batching)
	o.batch_states = C.uint32_t(opts.BatchStates)
	o.assumed_pod_ttl_seconds = C.double(opts.AssumedPodTTL.Seconds())
	if opts.Executor != nil {
		o.executor = opts.Executor.h
	}
	cfg, n, free := cbytes(configYAML)
	defer free()
	e := &Engine{}
	if err := call(func() C.int { return C.bs_engine_create(cfg, n, &o, &e.h) }); err != nil {
		return nil, err
	}
	runtime.SetFinalizer(e, (*Engine).Close)
	return e, nil
}

// Close frees the engine; later calls fail with InvalidArgument.
func (e *Engine) Close() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.h != nil {
		C.bs_engine_destroy(e.h)
		e.h = nil
	}
	runtime.SetFinalizer(e, nil)
}

// Backend is the backend the engine runs on now ("cpu", "cuda").
func (e *Engine) Backend() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return C.GoString(C.bs_engine_backend(e.h))
}

// Load replaces the cluster: a NodeList, a PodList (its bound pods are
// loaded) and a List of objects (nil: none).
func (e *Engine) Load(nodes, pods, objects []byte) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	np, nn, f1 := cbytes(nodes)
	defer f1()
	pp, pn, f2 := cbytes(pods)
	defer f2()
	op, on, f3 := cbytes(objects)
	defer f3()
	return call(func() C.int { return C.bs_engine_load(e.h, np, nn, pp, pn, op, on) })
}

func (e *Engine) jsonCall(b []byte, f func(*C.char, C.size_t) C.int) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	p, n, free := cbytes(b)
	defer free()
	if p == nil {
		return &Error{Status: InvalidInput, Message: "empty JSON"}
	}
	return call(func() C.int { return f(p, n) })
}

func (e *Engine) nameCall(name string, f func(*C.char) C.int) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	s := C.CString(name)
	defer C.free(unsafe.Pointer(s))
	return call(func() C.int { return f(s) })
}

// AddNode, UpdateNode, RemoveNode: the node informer's events.
func (e *Engine) AddNode(node []byte) error {
	return e.jsonCall(node, func(p *C.char, n C.size_t) C.int { return C.bs_engine_add_node(e.h, p, n) })
}
func (e *Engine) UpdateNode(node []byte) error {
	return e.jsonCall(node, func(p *C.char, n C.size_t) C.int { return C.bs_engine_update_node(e.h, p, n) })
}
func (e *Engine) RemoveNode(name string) error {
	return e.nameCall(name, func(s *C.char) C.int { return C.bs_engine_remove_node(e.h, s) })
}

// AddPod (the informer's add of a bound pod; confirms an assumed one),
// UpdatePod, RemovePod by cache key (UID, or namespace/name).
func (e *Engine) AddPod(pod []byte) error {
	return e.jsonCall(pod, func(p *C.char, n C.size_t) C.int { return C.bs_engine_add_pod(e.h, p, n) })
}
func (e *Engine) UpdatePod(pod []byte) error {
	return e.jsonCall(pod, func(p *C.char, n C.size_t) C.int { return C.bs_engine_update_pod(e.h, p, n) })
}
func (e *Engine) RemovePod(key string) error {
	return e.nameCall(key, func(s *C.char) C.int { return C.bs_engine_remove_pod(e.h, s) })
}

// RemovePendingPod is the informer's delete of a pod that is not bound: a
// pod whose last Schedule failed stops counting as pending in the metrics
// (ErrNotFound when no failed attempt of it is counted).
func (e *Engine) RemovePendingPod(key string) error {
	return e.nameCall(key, func(s *C.char) C.int { return C.bs_engine_remove_pending_pod(e.h, s) })
}

// AssumePod, ForgetPod, FinishBinding: the scheduler's own cache calls.
func (e *Engine) AssumePod(pod []byte) error {
	return e.jsonCall(pod, func(p *C.char, n C.size_t) C.int { return C.bs_engine_assume_pod(e.h, p, n) })
}
func (e *Engine) ForgetPod(key string) error {
	return e.nameCall(key, func(s *C.char) C.int { return C.bs_engine_forget_pod(e.h, s) })
}
func (e *Engine) FinishBinding(key string) error {
	return e.nameCall(key, func(s *C.char) C.int { return C.bs_engine_finish_binding(e.h, s) })
}

// IsAssumedPod reports whether the pod is assumed and not yet confirmed.
func (e *Engine) IsAssumedPod(key string) (bool, error) {
	var out C.int
	err := e.nameCall(key, func(s *C.char) C.int { return C.bs_engine_is_assumed_pod(e.h, s, &out) })
	return out == 1, err
}

// AddObject, UpdateObject (JSON with its kind), RemoveObject by kind,
// namespace ("" for cluster-scoped kinds) and name. Pod groups: a
// Workload's podGroups go together; the two PodGroup resources are removed
// as "PodGroup.scheduling.k8s.io" and "PodGroup.scheduling.x-k8s.io"
// (a plain "PodGroup" is InvalidArgument).
func (e *Engine) AddObject(obj []byte) error {
	return e.jsonCall(obj, func(p *C.char, n C.size_t) C.int { return C.bs_engine_add_object(e.h, p, n) })
}
func (e *Engine) UpdateObject(obj []byte) error {
	return e.jsonCall(obj, func(p *C.char, n C.size_t) C.int { return C.bs_engine_update_object(e.h, p, n) })
}
func (e *Engine) RemoveObject(kind, namespace, name string) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	k, ns, nm := C.CString(kind), C.CString(namespace), C.CString(name)
	defer C.free(unsafe.Pointer(k))
	defer C.free(unsafe.Pointer(ns))
	defer C.free(unsafe.Pointer(nm))
	return call(func() C.int { return C.bs_engine_remove_object(e.h, k, ns, nm) })
}

// NodeFilter is one node's entry in a NodeData filter column (SetNodeFilters).
type NodeFilter struct {
	Node   string
	Pass   bool
	Reason string // when the node fails; "": "node(s) didn't pass <column>"
}

// NodeScore is one node's entry in a NodeData score column (SetNodeScores).
type NodeScore struct {
	Node  string
	Score int64 // 0..100
}

// cstrings copies ss into C memory (an array of C strings: cgo forbids Go
// pointers to Go pointers) for the duration of a call.
func cstrings(ss []string) (**C.char, func()) {
	if len(ss) == 0 {
		return nil, func() {}
	}
	arr := unsafe.Slice((**C.char)(C.malloc(C.size_t(len(ss))*C.size_t(unsafe.Sizeof((*C.char)(nil))))), len(ss))
	for i, s := range ss {
		arr[i] = C.CString(s)
	}
	return &arr[0], func() {
		for _, p := range arr {
			C.free(unsafe.Pointer(p))
		}
		C.free(unsafe.Pointer(&arr[0]))
	}
}

// SetNodeFilter sets a node's verdict in a NodeData filter column: it
// passes, or fails with reason (docs/plugins.md). The column is made by its
// first set. ErrNotFound for an unknown node; ErrInvalidInput for a bad
// column name, a score column, or a reason with control characters.
func (e *Engine) SetNodeFilter(column, node string, pass bool, reason string) error {
	return e.SetNodeFilters(column, []NodeFilter{{Node: node, Pass: pass, Reason: reason}})
}

// SetNodeFilters sets several nodes' verdicts at once: all or nothing.
func (e *Engine) SetNodeFilters(column string, values []NodeFilter) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	names := make([]string, len(values))
	reasons := make([]string, len(values))
	pass := make([]C.int, len(values)+1)
	for i, v := range values {
		names[i], reasons[i] = v.Node, v.Reason
		if v.Pass {
			pass[i] = 1
		}
	}
	col := C.CString(column)
	defer C.free(unsafe.Pointer(col))
	np, freeNames := cstrings(names)
	defer freeNames()
	rp, freeReasons := cstrings(reasons)
	defer freeReasons()
	return call(func() C.int {
		return C.bs_engine_set_node_filters(e.h, col, np, &pass[0], rp, C.size_t(len(values)))
	})
}

// SetNodeScore sets a node's score (0..100) in a NodeData score column.
func (e *Engine) SetNodeScore(column, node string, score int64) error {
	return e.SetNodeScores(column, []NodeScore{{Node: node, Score: score}})
}

// SetNodeScores sets several nodes' scores at once: all or nothing.
func (e *Engine) SetNodeScores(column string, values []NodeScore) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	names := make([]string, len(values))
	scores := make([]C.int64_t, len(values)+1)
	for i, v := range values {
		names[i], scores[i] = v.Node, C.int64_t(v.Score)
	}
	col := C.CString(column)
	defer C.free(unsafe.Pointer(col))
	np, freeNames := cstrings(names)
	defer freeNames()
	return call(func() C.int {
		return C.bs_engine_set_node_scores(e.h, col, np, &scores[0], C.size_t(len(values)))
	})
}

// ClearNodeData removes a node's entry from a NodeData column (the node
// then has no data there); ErrNotFound for an unknown column or node.
func (e *Engine) ClearNodeData(column, node string) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	col, n := C.CString(column), C.CString(node)
	defer C.free(unsafe.Pointer(col))
	defer C.free(unsafe.Pointer(n))
	return call(func() C.int { return C.bs_engine_clear_node_data(e.h, col, n) })
}

// ClearNodeDataColumn removes every node's entry from a NodeData column.
func (e *Engine) ClearNodeDataColumn(column string) error {
	return e.nameCall(column, func(s *C.char) C.int { return C.bs_engine_clear_node_data(e.h, s, nil) })
}

// Result is one decision.
type Result struct {
	Pod           string
	Node          string // "" when not placed
	Score         int64
	FeasibleNodes uint32
	Code          int // 0 placed; 1 Error, 2 Unschedulable, 3 UnschedulableAndUnresolvable
	CodeName      string
	Message       string
	Devices       []int32
	DeviceGroup   string
	Warnings      []string
	JSON          string // the line `bulkscore schedule` writes for it
	// DefaultPreemption: the node the pod preempted on ("" when it did not),
	// the pods evicted for it (namespace/name, sorted) and how many of those
	// evictions a PodDisruptionBudget protected.
	NominatedNode string
	Victims       []string
	PDBViolations int64
	// Gang scheduling (ScheduleAll): the member's group key ("ns/name",
	// "ns/workload/podGroup[/replicaKey]") and its verdict, "admitted" or
	// "rejected"; both "" for a pod in no gang.
	PodGroup     string
	GroupOutcome string
	// A topology-aware gang admitted in one domain: "key=value", else "".
	GroupDomain string
}

func goResult(r *C.bs_schedule_result) *Result {
	out := &Result{
		Pod:           C.GoString(r.pod),
		Node:          C.GoString(r.node),
		Score:         int64(r.score),
		FeasibleNodes: uint32(r.feasible_nodes),
		Code:          int(r.code),
		CodeName:      C.GoString(r.code_name),
		Message:       C.GoString(r.message),
		DeviceGroup:   C.GoString(r.device_group),
		JSON:          C.GoString(r.json),
		NominatedNode: C.GoString(r.nominated_node),
		PDBViolations: int64(r.pdb_violations),
		PodGroup:      C.GoString(r.pod_group),
		GroupOutcome:  C.GoString(r.group_outcome),
		GroupDomain:   C.GoString(r.group_domain),
	}
	if r.num_victims > 0 {
		for _, v := range unsafe.Slice(r.victims, int(r.num_victims)) {
			out.Victims = append(out.Victims, C.GoString(v))
		}
	}
	if r.num_devices > 0 {
		for _, d := range unsafe.Slice(r.devices, int(r.num_devices)) {
			out.Devices = append(out.Devices, int32(d))
		}
	}
	if r.num_warnings > 0 {
		for _, w := range unsafe.Slice(r.warnings, int(r.num_warnings)) {
			out.Warnings = append(out.Warnings, C.GoString(w))
		}
	}
	return out
}

func (e *Engine) decide(pod []byte, peek bool) (*Result, error) {
	var r *C.bs_schedule_result
	err := e.jsonCall(pod, func(p *C.char, n C.size_t) C.int {
		if peek {
			return C.bs_engine_peek(e.h, p, n, &r)
		}
		return C.bs_engine_schedule(e.h, p, n, &r)
	})
	if err != nil {
		return nil, err
	}
	defer C.bs_schedule_result_free(r)
	return goResult(r), nil
}

// Schedule filters, scores and selects a node for the pod and assumes it
// there. A pod the engine holds already gets Code 1 and a message.
func (e *Engine) Schedule(pod []byte) (*Result, error) { return e.decide(pod, false) }

// Peek is Schedule's decision now, with nothing assumed.
func (e *Engine) Peek(pod []byte) (*Result, error) { return e.decide(pod, true) }

// ScheduleAll schedules the pending pods of a PodList in queue order, gangs
// all or nothing (docs/plugins.md, "Pod groups"); one Result per pod, in
// the list's order. A pod the engine refuses ends the run with an error:
// the pods before it in queue order keep their placements.
func (e *Engine) ScheduleAll(pods []byte) ([]*Result, error) {
	var rs *C.bs_schedule_results
	err := e.jsonCall(pods, func(p *C.char, n C.size_t) C.int { return C.bs_engine_schedule_all(e.h, p, n, &rs) })
	if err != nil {
		return nil, err
	}
	defer C.bs_schedule_results_free(rs)
	out := make([]*Result, 0, int(rs.count))
	if rs.count > 0 {
		for _, r := range unsafe.Slice(rs.results, int(rs.count)) {
			out = append(out, goResult(r))
		}
	}
	return out, nil
}

// PodGroupStatus is a gang member's group as ScheduleAll would find it now
// (explain's "podGroup"): API to Pending are empty when the group's object
// is missing; Rejection is the early rejection's message, "" when the
// group would be tried.
type PodGroupStatus struct {
	Name      string `json:"name"`
	API       string `json:"api"`
	MinField  string `json:"minField"`
	Min       int32  `json:"min"`
	Placed    int32  `json:"placed"`
	Pending   int32  `json:"pending"`
	Rejection string `json:"rejection"`
}

// PodGroupStatus returns the group of pod with pending (a PodList, nil for
// none; the pod among them if it is pending) still to schedule; nil for a
// pod in no gang.
func (e *Engine) PodGroupStatus(pod, pending []byte) (*PodGroupStatus, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	pp, pn, f1 := cbytes(pod)
	defer f1()
	if pp == nil {
		return nil, &Error{Status: InvalidInput, Message: "empty JSON"}
	}
	lp, ln, f2 := cbytes(pending)
	defer f2()
	var text *C.char
	if err := call(func() C.int { return C.bs_engine_pod_group_status(e.h, pp, pn, lp, ln, &text) }); err != nil {
		return nil, err
	}
	defer C.bs_free(unsafe.Pointer(text))
	var out *PodGroupStatus
	if err := json.Unmarshal([]byte(C.GoString(text)), &out); err != nil {
		return nil, &Error{Status: Internal, Message: "pod group status: " + err.Error()}
	}
	return out, nil
}

// RankedNode is one of Rank's nodes.
type RankedNode struct {
	Node     string
	Total    int64
	Raw      []int64 // per Ranking.Plugins
	Weighted []int64 // normalized times weight; they sum to Total
}

// Rejection counts the nodes a plugin rejected for one reason.
type Rejection struct {
	Plugin, Reason string
	Nodes          uint64
}

// Ranking is Rank's answer.
type Ranking struct {
	Pod            string
	Plugins        []string
	Nodes          []RankedNode
	EvaluatedNodes uint32
	FeasibleNodes  uint32
	TiedAtBest     uint32
	Chosen         string
	Rejections     []Rejection
	Message        string
	JSON           string
}

// Rank returns the k best feasible nodes for the pod now, with scores.
func (e *Engine) Rank(pod []byte, k int) (*Ranking, error) {
	var r *C.bs_ranking
	err := e.jsonCall(pod, func(p *C.char, n C.size_t) C.int { return C.bs_engine_rank(e.h, p, n, C.uint32_t(k), &r) })
	if err != nil {
		return nil, err
	}
	defer C.bs_ranking_free(r)
	out := &Ranking{
		Pod:            C.GoString(r.pod),
		EvaluatedNodes: uint32(r.evaluated_nodes),
		FeasibleNodes:  uint32(r.feasible_nodes),
		TiedAtBest:     uint32(r.tied_at_best),
		Chosen:         C.GoString(r.chosen),
		Message:        C.GoString(r.message),
		JSON:           C.GoString(r.json),
	}
	np := int(r.num_plugins)
	if np > 0 {
		for _, p := range unsafe.Slice(r.plugins, np) {
			out.Plugins = append(out.Plugins, C.GoString(p))
		}
	}
	if r.num_nodes > 0 {
		for _, n := range unsafe.Slice(r.nodes, int(r.num_nodes)) {
			rn := RankedNode{Node: C.GoString(n.node), Total: int64(n.total)}
			if np > 0 {
				for _, v := range unsafe.Slice(n.raw, np) {
					rn.Raw = append(rn.Raw, int64(v))
				}
				for _, v := range unsafe.Slice(n.weighted, np) {
					rn.Weighted = append(rn.Weighted, int64(v))
				}
			}
			out.Nodes = append(out.Nodes, rn)
		}
	}
	if r.num_rejections > 0 {
		for _, x := range unsafe.Slice(r.rejections, int(r.num_rejections)) {
			out.Rejections = append(out.Rejections, Rejection{C.GoString(x.plugin), C.GoString(x.reason), uint64(x.nodes)})
		}
	}
	return out, nil
}

// TakeWarnings returns the warnings gathered since the last call.
func (e *Engine) TakeWarnings() ([]string, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	var list **C.char
	var count C.size_t
	if err := call(func() C.int { return C.bs_engine_take_warnings(e.h, &list, &count) }); err != nil {
		return nil, err
	}
	defer C.bs_free(unsafe.Pointer(list))
	var out []string
	if count > 0 {
		for _, s := range unsafe.Slice(list, int(count)) {
			out = append(out, C.GoString(s))
		}
	}
	return out, nil
}

// SetWindow sets the windows of pods ScheduleAll looks ahead at (docs/batching.md,
// "Windows of pods"): the next n ordinary pods evaluated together ahead of their
// turn; 0 (the default) is auto (two per thread, 8 to 64, on a CPU backend of four
// threads or more, while it pays), 1 none. Decisions do not depend on it.
func (e *Engine) SetWindow(n uint32) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return call(func() C.int { return C.bs_engine_set_window(e.h, C.uint32_t(n)) })
}

// MetricsText is the engine's counters in Prometheus text format.
func (e *Engine) MetricsText() (string, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	var text *C.char
	if err := call(func() C.int { return C.bs_engine_metrics_text(e.h, &text) }); err != nil {
		return "", err
	}
	defer C.bs_free(unsafe.Pointer(text))
	return C.GoString(text), nil
}
