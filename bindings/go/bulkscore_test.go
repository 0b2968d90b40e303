package bulkscore

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The CLI the test compares with (BULKSCORE_CLI, set by ctest).
func cli(t *testing.T) string {
	p := os.Getenv("BULKSCORE_CLI")
	if p == "" {
		t.Skip("BULKSCORE_CLI is not set (ctest sets it)")
	}
	return p
}

func run(t *testing.T, name string, args ...string) {
	t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %v: %v\n%s", name, args, err, out)
	}
}

type podItem struct {
	Metadata struct {
		UID               string  `json:"uid"`
		Namespace         string  `json:"namespace"`
		Name              string  `json:"name"`
		DeletionTimestamp *string `json:"deletionTimestamp"`
	} `json:"metadata"`
	Spec struct {
		NodeName      string `json:"nodeName"`
		SchedulerName string `json:"schedulerName"`
	} `json:"spec"`
	Status struct {
		Phase string `json:"phase"`
	} `json:"status"`
}

// The bundled default cluster, scheduled through the binding as a Go
// scheduler would (load, then schedule each pending pod, finish its
// binding and confirm it with the informer's add), writes the same bytes as
// `bulkscore schedule`.
func TestSchedulesTheDefaultClusterAsTheCLIDoes(t *testing.T) {
	bin := cli(t)
	dir := t.TempDir()
	nodesPath, podsPath, objectsPath := filepath.Join(dir, "nodes.json"), filepath.Join(dir, "pods.json"), filepath.Join(dir, "objects.json")
	run(t, bin, "generate", "--nodes-out", nodesPath, "--pods-out", podsPath, "--objects-out", objectsPath)
	want := filepath.Join(dir, "schedule.jsonl")
	run(t, bin, "schedule", "--backend", "cpu", "--nodes", nodesPath, "--pods", podsPath, "--objects", objectsPath, "-o", want)

	nodes, _ := os.ReadFile(nodesPath)
	pods, _ := os.ReadFile(podsPath)
	objects, _ := os.ReadFile(objectsPath)
	// A shared pool, as a scheduler with several engines would use.
	pool, err := NewExecutor(2)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	opts := DefaultOptions()
	opts.Backend = "cpu"
	opts.Executor = pool
	e, err := NewEngine(nil, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if err := e.Load(nodes, pods, objects); err != nil {
		t.Fatal(err)
	}
	var list struct {
		Items []json.RawMessage `json:"items"`
	}
	if err := json.Unmarshal(pods, &list); err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	scheduled := 0
	for _, raw := range list.Items {
		var p podItem
		if err := json.Unmarshal(raw, &p); err != nil {
			t.Fatal(err)
		}
		pending := p.Spec.NodeName == "" && p.Metadata.DeletionTimestamp == nil &&
			p.Status.Phase != "Succeeded" && p.Status.Phase != "Failed" &&
			(p.Spec.SchedulerName == "" || p.Spec.SchedulerName == "default-scheduler")
		if !pending {
			continue
		}
		r, err := e.Schedule(raw)
		if err != nil {
			t.Fatal(err)
		}
		got.WriteString(r.JSON)
		got.WriteByte('\n')
		if r.Node == "" {
			continue
		}
		scheduled++
		key := p.Metadata.UID
		if key == "" {
			key = p.Metadata.Namespace + "/" + p.Metadata.Name
		}
		if assumed, err := e.IsAssumedPod(key); err != nil || !assumed {
			t.Fatalf("%s: assumed %v, %v", key, assumed, err)
		}
		if err := e.FinishBinding(key); err != nil {
			t.Fatal(err)
		}
		// The informer's add of the bound pod confirms the assumption.
		var obj map[string]any
		if err := json.Unmarshal(raw, &obj); err != nil {
			t.Fatal(err)
		}
		obj["spec"].(map[string]any)["nodeName"] = r.Node
		bound, _ := json.Marshal(obj)
		if err := e.AddPod(bound); err != nil {
			t.Fatalf("%s: %v", key, err)
		}
		if err := e.AddPod(bound); !errors.Is(err, ErrAlreadyExists) {
			t.Fatalf("%s: a second add: %v", key, err)
		}
	}
	expected, _ := os.ReadFile(want)
	if !bytes.Equal(got.Bytes(), expected) {
		gl, wl := bytes.Split(got.Bytes(), []byte("\n")), bytes.Split(expected, []byte("\n"))
		for i := 0; i < len(gl) && i < len(wl); i++ {
			if !bytes.Equal(gl[i], wl[i]) {
				t.Fatalf("line %d differs:\n binding: %s\n CLI:     %s", i+1, gl[i], wl[i])
			}
		}
		t.Fatalf("%d lines from the binding, %d from the CLI", len(gl), len(wl))
	}
	if scheduled < 1000 {
		t.Fatalf("only %d pods placed", scheduled)
	}
}

// Errors carry their status; events, rank and metrics work from Go.
func TestStatusesRankAndMetrics(t *testing.T) {
	if ABIVersion() < 1 || Version() == "" {
		t.Fatal("version")
	}
	opts := DefaultOptions()
	opts.Backend = "cpu"
	opts.TieBreak = TieBreakFirst
	if _, err := NewEngine([]byte("profiles: ["), opts); !errors.Is(err, ErrInvalidInput) {
		t.Fatalf("bad config: %v", err)
	}
	e, err := NewEngine(nil, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	node := func(name, cpu string) []byte {
		return []byte(`{"metadata":{"name":"` + name + `"},"status":{"allocatable":{"cpu":"` + cpu + `","memory":"8Gi","pods":"110"}}}`)
	}
	for _, n := range [][]byte{node("n1", "4"), node("n2", "8")} {
		if err := e.AddNode(n); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.AddNode(node("n1", "4")); !errors.Is(err, ErrAlreadyExists) {
		t.Fatalf("second add: %v", err)
	}
	pod := []byte(`{"metadata":{"name":"p","namespace":"default","uid":"u-p"},"spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":"1"}}}]}}`)
	rk, err := e.Rank(pod, 5)
	if err != nil {
		t.Fatal(err)
	}
	if rk.Chosen != "n2" || len(rk.Nodes) != 2 || rk.Nodes[0].Node != "n2" || len(rk.Plugins) == 0 {
		t.Fatalf("rank: %+v", rk)
	}
	r, err := e.Schedule(pod)
	if err != nil || r.Node != "n2" {
		t.Fatalf("schedule: %+v %v", r, err)
	}
	if err := e.ForgetPod("u-p"); err != nil {
		t.Fatal(err)
	}
	if err := e.ForgetPod("u-p"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("second forget: %v", err)
	}
	if err := e.RemoveNode("n9"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("remove: %v", err)
	}
	var be *Error
	if err := e.UpdateNode(node("n9", "1")); !errors.As(err, &be) || be.Status != NotFound || be.Message == "" {
		t.Fatalf("update: %v", err)
	}
	if m, err := e.MetricsText(); err != nil || !strings.Contains(m, `scheduler_schedule_attempts_total{profile="default-scheduler",result="scheduled"} 1`) {
		t.Fatalf("metrics: %q %v", m, err)
	}
	if err := e.RemovePendingPod("u-p"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("remove pending: %v", err)
	}
	if _, err := e.TakeWarnings(); err != nil {
		t.Fatal(err)
	}
	e.Close()
	if _, err := e.Schedule(pod); !errors.Is(err, &Error{Status: InvalidArgument}) {
		t.Fatalf("after close: %v", err)
	}
}

// Preemption from Go: PriorityClass and PodDisruptionBudget objects as
// events, and a result that names its nominated node, victims and PDB
// violations.
func TestPreemption(t *testing.T) {
	opts := DefaultOptions()
	opts.Backend = "cpu"
	e, err := NewEngine(nil, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if err := e.AddNode([]byte(`{"metadata":{"name":"n1"},"status":{"allocatable":{"cpu":"2","memory":"8Gi","pods":"110"}}}`)); err != nil {
		t.Fatal(err)
	}
	if err := e.AddPod([]byte(`{"metadata":{"name":"low","namespace":"default","uid":"u-low","labels":{"app":"low"}},"spec":{"nodeName":"n1","containers":[{"name":"c","resources":{"requests":{"cpu":"2"}}}]},"status":{"phase":"Running"}}`)); err != nil {
		t.Fatal(err)
	}
	high := []byte(`{"apiVersion":"scheduling.k8s.io/v1","kind":"PriorityClass","metadata":{"name":"high"},"value":1000}`)
	if err := e.AddObject(high); err != nil {
		t.Fatal(err)
	}
	if err := e.AddObject(high); !errors.Is(err, ErrAlreadyExists) {
		t.Fatalf("second add: %v", err)
	}
	if err := e.AddObject([]byte(`{"apiVersion":"policy/v1","kind":"PodDisruptionBudget","metadata":{"name":"low","namespace":"default"},"spec":{"minAvailable":1,"selector":{"matchLabels":{"app":"low"}}},"status":{"disruptionsAllowed":0,"currentHealthy":1,"desiredHealthy":1}}`)); err != nil {
		t.Fatal(err)
	}
	r, err := e.Schedule([]byte(`{"metadata":{"name":"hi","namespace":"default","uid":"u-hi"},"spec":{"priorityClassName":"high","containers":[{"name":"c","resources":{"requests":{"cpu":"2"}}}]}}`))
	if err != nil || r.Node != "n1" || r.NominatedNode != "n1" || len(r.Victims) != 1 || r.Victims[0] != "default/low" || r.PDBViolations != 1 {
		t.Fatalf("schedule: %+v %v", r, err)
	}
	if !strings.HasSuffix(r.JSON, `,"nominatedNode":"n1","victims":["default/low"],"pdbViolations":1}`) {
		t.Fatalf("json: %s", r.JSON)
	}
	if err := e.RemoveObject("PodDisruptionBudget", "default", "low"); err != nil {
		t.Fatal(err)
	}
	if err := e.RemoveObject("PriorityClass", "", "high"); err != nil {
		t.Fatal(err)
	}
	if err := e.RemoveObject("PriorityClass", "", "high"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("second remove: %v", err)
	}
}

// NodeData's columns from Go: verdicts with reasons, bulk scores, clears.
func TestNodeData(t *testing.T) {
	opts := DefaultOptions()
	opts.Backend = "cpu"
	opts.TieBreak = TieBreakFirst
	config := []byte(`apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    multiPoint:
      enabled: [{name: NodeData, weight: 5}]
  pluginConfig:
  - name: NodeData
    args: {filterColumn: example.com/license, scoreColumn: example.com/cost, scoreNormalization: Reverse}
`)
	e, err := NewEngine(config, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	for _, n := range []string{"n1", "n2", "n3"} {
		if err := e.AddNode([]byte(`{"metadata":{"name":"` + n + `"},"status":{"allocatable":{"cpu":"4","memory":"8Gi","pods":"110"}}}`)); err != nil {
			t.Fatal(err)
		}
	}
	pod := []byte(`{"metadata":{"name":"p","namespace":"default","uid":"u-p"},"spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":"1"}}}]}}`)
	if err := e.SetNodeScores("example.com/cost", []NodeScore{{"n1", 90}, {"n2", 10}, {"n3", 50}}); err != nil {
		t.Fatal(err)
	}
	if r, err := e.Peek(pod); err != nil || r.Node != "n2" {
		t.Fatalf("cheapest: %+v %v", r, err)
	}
	if err := e.SetNodeFilter("example.com/license", "n2", false, "node(s) had an expired license"); err != nil {
		t.Fatal(err)
	}
	if r, err := e.Peek(pod); err != nil || r.Node != "n3" {
		t.Fatalf("n2 unlicensed: %+v %v", r, err)
	}
	if err := e.SetNodeFilters("example.com/license", []NodeFilter{{Node: "n1"}, {Node: "n3"}}); err != nil {
		t.Fatal(err)
	}
	r, err := e.Peek(pod)
	if err != nil || r.Node != "" || r.Message != "0/3 nodes are available: 1 node(s) had an expired license, 2 node(s) didn't pass example.com/license." {
		t.Fatalf("none licensed: %+v %v", r, err)
	}
	if err := e.SetNodeScore("example.com/cost", "n1", 101); !errors.Is(err, ErrInvalidInput) {
		t.Fatalf("score 101: %v", err)
	}
	if err := e.SetNodeScore("example.com/cost", "n9", 1); !errors.Is(err, ErrNotFound) {
		t.Fatalf("unknown node: %v", err)
	}
	if err := e.SetNodeFilters("example.com/cost", []NodeFilter{{Node: "n1", Pass: true}}); !errors.Is(err, ErrInvalidInput) {
		t.Fatalf("a score column: %v", err)
	}
	if err := e.ClearNodeData("example.com/license", "n2"); err != nil {
		t.Fatal(err)
	}
	if r, err := e.Peek(pod); err != nil || r.Node != "n2" {
		t.Fatalf("n2 without data passes: %+v %v", r, err)
	}
	if err := e.ClearNodeDataColumn("example.com/cost"); err != nil {
		t.Fatal(err)
	}
	if err := e.ClearNodeDataColumn("example.com/none"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("unknown column: %v", err)
	}
}

// Gang scheduling from Go: a Workload and a Coscheduling PodGroup as
// events, ScheduleAll placing gangs all or nothing, the group fields of the
// results, the group's state, and a removed Workload's members rejected.
func TestPodGroups(t *testing.T) {
	opts := DefaultOptions()
	opts.Backend = "cpu"
	opts.TieBreak = TieBreakFirst
	e, err := NewEngine(nil, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if err := e.AddNode([]byte(`{"metadata":{"name":"n1"},"status":{"allocatable":{"cpu":"4","memory":"8Gi","pods":"110"}}}`)); err != nil {
		t.Fatal(err)
	}
	pod := func(name, meta, spec string) string {
		return `{"metadata":{"name":"` + name + `","namespace":"default","uid":"u-` + name + `"` + meta + `},"spec":{` + spec +
			`"containers":[{"name":"c","resources":{"requests":{"cpu":"1"}}}]}}`
	}
	worker := func(name string) string { return pod(name, "", `"workloadRef":{"name":"train","podGroup":"workers"},`) }
	big := func(name string) string { return pod(name, `,"labels":{"scheduling.x-k8s.io/pod-group":"big"}`, "") }
	list := func(items ...string) []byte {
		return []byte(`{"apiVersion":"v1","kind":"PodList","items":[` + strings.Join(items, ",") + `]}`)
	}
	train := []byte(`{"apiVersion":"scheduling.k8s.io/v1alpha1","kind":"Workload","metadata":{"name":"train","namespace":"default"},"spec":{"podGroups":[{"name":"workers","policy":{"gang":{"minCount":2}}},{"name":"driver","policy":{"basic":{}}}]}}`)
	if err := e.AddObject(train); err != nil {
		t.Fatal(err)
	}
	if err := e.AddObject(train); !errors.Is(err, ErrAlreadyExists) {
		t.Fatalf("second add: %v", err)
	}
	if err := e.AddObject([]byte(`{"apiVersion":"scheduling.x-k8s.io/v1alpha1","kind":"PodGroup","metadata":{"name":"big","namespace":"default"},"spec":{"minMember":3}}`)); err != nil {
		t.Fatal(err)
	}

	// Windows of pods: 4 changes no result below (0, auto, is the default).
	if err := e.SetWindow(0); err != nil {
		t.Fatalf("window 0: %v", err)
	}
	if err := e.SetWindow(4); err != nil {
		t.Fatal(err)
	}

	// Admitted, in the list's order; the ordinary pod has no group.
	rs, err := e.ScheduleAll(list(worker("w1"), pod("x1", "", ""), worker("w2")))
	if err != nil || len(rs) != 3 {
		t.Fatalf("schedule all: %v %v", rs, err)
	}
	for i, r := range rs {
		group, outcome := "default/train/workers", "admitted"
		if i == 1 {
			group, outcome = "", ""
		}
		if r.Node != "n1" || r.PodGroup != group || r.GroupOutcome != outcome {
			t.Fatalf("result %d: %+v", i, r)
		}
	}

	// Rejected: one cpu left for a gang of three.
	bigs := list(big("b1"), big("b2"), big("b3"))
	st, err := e.PodGroupStatus([]byte(big("b1")), bigs)
	if err != nil || st == nil || st.Name != "default/big" || st.MinField != "minMember" || st.Min != 3 || st.Pending != 3 || st.Rejection != "" {
		t.Fatalf("status: %+v %v", st, err)
	}
	rs, err = e.ScheduleAll(bigs)
	if err != nil || len(rs) != 3 {
		t.Fatalf("schedule all: %v %v", rs, err)
	}
	for _, r := range rs {
		if r.Node != "" || r.Code != 2 || r.GroupOutcome != "rejected" || !strings.HasPrefix(r.Message, `pod group "default/big" rejected: 1/3 members placed`) {
			t.Fatalf("rejected: %+v", r)
		}
	}
	if assumed, err := e.IsAssumedPod("u-b1"); err != nil || assumed {
		t.Fatalf("b1 assumed: %v %v", assumed, err)
	}
	if st, err := e.PodGroupStatus([]byte(pod("x2", "", "")), nil); err != nil || st != nil {
		t.Fatalf("no gang: %+v %v", st, err)
	}

	// Removed: a plain "PodGroup" is ambiguous; the Workload's later
	// members are rejected as missing.
	if err := e.RemoveObject("PodGroup", "default", "big"); !errors.Is(err, &Error{Status: InvalidArgument}) {
		t.Fatalf("plain PodGroup: %v", err)
	}
	if err := e.RemoveObject("PodGroup.scheduling.x-k8s.io", "default", "big"); err != nil {
		t.Fatal(err)
	}
	if err := e.RemoveObject("Workload", "default", "train"); err != nil {
		t.Fatal(err)
	}
	rs, err = e.ScheduleAll(list(worker("w3")))
	if err != nil || len(rs) != 1 || rs[0].GroupOutcome != "rejected" || !strings.Contains(rs[0].Message, `waiting for pods's workload "train"`) {
		t.Fatalf("missing workload: %+v %v", rs, err)
	}
	if _, err := e.ScheduleAll([]byte(`{`)); !errors.Is(err, ErrInvalidInput) {
		t.Fatalf("bad list: %v", err)
	}
}
