// NodePorts PreFilter and Filter, with the expected values of upstream's
// pkg/scheduler/framework/plugins/nodeports/node_ports_test.go (TestNodePorts,
// TestFits) and of the used-port set semantics of the framework's
// HostPortInfo (kube-scheduler framework types_test.go TestHostPortInfo_Check).
#include <gtest/gtest.h>

#include "tests/test_util.hpp"

namespace bulkscore {
namespace {

using namespace testutil;

const char* const kPlugin = "NodePorts";
const NodeFilterResult kPortsTaken{Code::Unschedulable, {"node(s) didn't have free ports for the requested pod ports"}};

using Ports = std::vector<ContainerPort>;

Pod pod_with_ports(Ports ports) { return make_pod("incoming", {container_with_ports(std::move(ports))}); }

// One node "n"; `existing` ports are held by one pod running there.
FilterRun check(const Pod& incoming, Ports existing) {
  std::vector<Pod> running;
  if (!existing.empty()) running.push_back(on_node(pod_with_ports(std::move(existing)), "n"));
  return run_filter(kPlugin, {make_node("n", 1000, 1000)}, running, incoming);
}

ContainerPort tcp(const std::string& ip, int32_t port) { return host_port("TCP", ip, port); }
ContainerPort udp(const std::string& ip, int32_t port) { return host_port("UDP", ip, port); }

// ---- TestNodePorts ------------------------------------------------------------

struct PortCase {
  const char* upstream;
  Ports incoming;
  Ports existing;
  bool fits;
};

TEST(NodePortsFilter, UpstreamTestNodePortsTable) {
  const std::vector<PortCase> cases = {
      {"other port", {udp("127.0.0.1", 8080)}, {udp("127.0.0.1", 9090)}, true},
      {"same udp port", {udp("127.0.0.1", 8080)}, {udp("127.0.0.1", 8080)}, false},
      {"same tcp port", {tcp("127.0.0.1", 8080)}, {tcp("127.0.0.1", 8080)}, false},
      {"different host ip", {tcp("127.0.0.1", 8080)}, {tcp("127.0.0.2", 8080)}, true},
      {"different protocol", {udp("127.0.0.1", 8080)}, {tcp("127.0.0.1", 8080)}, true},
      {"second udp port conflict", {udp("127.0.0.1", 8000), udp("127.0.0.1", 8080)}, {udp("127.0.0.1", 8080)}, false},
      {"first tcp port conflict",
       {tcp("127.0.0.1", 8001), udp("127.0.0.1", 8080)},
       {tcp("127.0.0.1", 8001), udp("127.0.0.1", 8081)},
       false},
      {"first tcp port conflict due to 0.0.0.0 hostIP", {tcp("0.0.0.0", 8001)}, {tcp("127.0.0.1", 8001)}, false},
      {"TCP hostPort conflict due to 0.0.0.0 hostIP",
       {tcp("10.0.10.10", 8001), tcp("0.0.0.0", 8001)},
       {tcp("127.0.0.1", 8001)},
       false},
      {"second tcp port conflict to 0.0.0.0 hostIP", {tcp("127.0.0.1", 8001)}, {tcp("0.0.0.0", 8001)}, false},
      {"second different protocol", {udp("127.0.0.1", 8001)}, {tcp("0.0.0.0", 8001)}, true},
      {"UDP hostPort conflict due to 0.0.0.0 hostIP",
       {udp("127.0.0.1", 8001)},
       {tcp("0.0.0.0", 8001), udp("0.0.0.0", 8001)},
       false},
  };
  for (const PortCase& tc : cases) {
    SCOPED_TRACE(tc.upstream);
    const FilterRun r = check(pod_with_ports(tc.incoming), tc.existing);
    EXPECT_EQ(r.prefilter, Code::Success);
    EXPECT_EQ(r.nodes.at(0), tc.fits ? fits() : kPortsTaken);
  }
}

TEST(NodePortsFilter, PodWithoutHostPortsSkips) {
  // TestNodePorts "skip filter"
  const FilterRun r = check(make_pod("incoming", {container()}), {});
  EXPECT_EQ(r.prefilter, Code::Skip);
  EXPECT_EQ(r.nodes.at(0), fits());
}

TEST(NodePortsFilter, NonSidecarInitContainerPortsAreIgnored) {
  // TestNodePorts "skip filter if the pod has only non-sidecar initContainer using hostPort"
  Container init = container_with_ports({host_port("TCP", "", 8001)});
  const Pod incoming = make_pod("incoming", {container()}, {init});
  const FilterRun r = check(incoming, {tcp("0.0.0.0", 8001)});
  EXPECT_EQ(r.prefilter, Code::Skip);
  EXPECT_EQ(r.nodes.at(0), fits());
}

TEST(NodePortsFilter, SidecarPortsConflict) {
  // TestNodePorts "TCP hostPort conflict with sidecar initContainer"
  Container init = container_with_ports({host_port("TCP", "", 8001)});
  init.restart_policy_always = true;
  const Pod incoming = make_pod("incoming", {container()}, {init});
  const FilterRun r = check(incoming, {tcp("0.0.0.0", 8001)});
  EXPECT_EQ(r.prefilter, Code::Success);
  EXPECT_EQ(r.nodes.at(0), kPortsTaken);
}

TEST(NodePortsFilter, ExistingSidecarPortsAreUsedButNotPlainInitContainerPorts) {
  // The node's used set follows the same container rule (GetHostPorts).
  Container side = container_with_ports({tcp("", 7000)});
  side.restart_policy_always = true;
  Container init = container_with_ports({tcp("", 7001)});
  const Pod existing = on_node(make_pod("existing", {container()}, {side, init}), "n");
  const std::vector<Node> nodes = {make_node("n", 1000, 1000)};
  EXPECT_EQ(run_filter(kPlugin, nodes, {existing}, pod_with_ports({tcp("", 7000)})).nodes.at(0), kPortsTaken);
  EXPECT_EQ(run_filter(kPlugin, nodes, {existing}, pod_with_ports({tcp("", 7001)})).nodes.at(0), fits());
}

// ---- TestFits -------------------------------------------------------------------

TEST(NodePortsFilter, UpstreamTestFitsTable) {
  const Ports many = {tcp("127.0.0.1", 80), tcp("127.0.1.1", 80), tcp("127.0.1.1", 90), tcp("127.0.1.1", 100)};
  const std::vector<PortCase> cases = {
      {"no conflicting ports", {tcp("127.0.0.1", 80)}, {tcp("127.0.0.1", 9090)}, true},
      {"multiple no conflicting ports",
       many,
       {tcp("127.0.0.1", 9090), tcp("127.0.0.1", 9191), tcp("127.0.1.1", 8080)},
       true},
      {"same ports but different protocols", {tcp("127.0.0.1", 80)}, {udp("127.0.0.1", 80)}, true},
      {"conflicting ports", {tcp("127.0.0.1", 80)}, {tcp("127.0.0.1", 80)}, false},
      {"multiple ports, some conflicting",
       many,
       {tcp("127.0.0.1", 9090), tcp("127.0.1.1", 90), tcp("127.0.1.1", 8080)},
       false},
  };
  for (const PortCase& tc : cases) {
    SCOPED_TRACE(tc.upstream);
    EXPECT_EQ(check(pod_with_ports(tc.incoming), tc.existing).nodes.at(0), tc.fits ? fits() : kPortsTaken);
  }
}

// ---- HostPortInfo semantics (TestHostPortInfo_Check) -------------------------------

TEST(NodePortsFilter, UpstreamHostPortInfoCheckTable) {
  const std::vector<PortCase> cases = {
      {"empty protocol and IP, other port", {host_port("", "", 81)}, {tcp("127.0.0.1", 80)}, true},
      {"empty protocol and IP check every IP over TCP", {host_port("", "", 80)}, {tcp("127.0.0.1", 80)}, false},
      {"TCP on 0.0.0.0 conflicts with a specific IP", {tcp("0.0.0.0", 80)}, {tcp("127.0.0.1", 80)}, false},
      {"UDP used, TCP wanted", {tcp("0.0.0.0", 80)}, {udp("127.0.0.1", 80)}, true},
      {"neighbouring ports",
       {tcp("0.0.0.0", 80)},
       {tcp("127.0.0.1", 79), tcp("127.0.0.1", 81), tcp("127.0.0.1", 82)},
       true},
      {"0.0.0.0 used blocks a specific IP", {tcp("127.0.0.1", 80)}, {tcp("0.0.0.0", 80)}, false},
      {"0.0.0.0 used, other ports and protocol",
       {tcp("127.0.0.1", 80)},
       {tcp("0.0.0.0", 79), udp("0.0.0.0", 80), tcp("0.0.0.0", 81), tcp("0.0.0.0", 82)},
       true},
      {"same IP, other ports and protocol",
       {tcp("127.0.0.1", 80)},
       {tcp("127.0.0.1", 79), udp("127.0.0.1", 80), tcp("127.0.0.1", 81), tcp("127.0.0.1", 82)},
       true},
  };
  for (const PortCase& tc : cases) {
    SCOPED_TRACE(tc.upstream);
    EXPECT_EQ(check(pod_with_ports(tc.incoming), tc.existing).nodes.at(0), tc.fits ? fits() : kPortsTaken);
  }
}

TEST(NodePortsFilter, HostPortZeroIsNeverWanted) {
  // TestHostPortInfo_Check: port 0 never conflicts; as the pod's only port it
  // leaves nothing to check, so PreFilter skips.
  ContainerPort p = tcp("", 0);
  const FilterRun r = check(pod_with_ports({p}), {tcp("127.0.0.1", 80)});
  EXPECT_EQ(r.prefilter, Code::Skip);
  EXPECT_EQ(r.nodes.at(0), fits());
}

TEST(NodePortsFilter, AssumedPodPortsBlockTheNextPod) {
  // Ports of a pod assumed with Snapshot::add_pod count like a running pod's.
  Snapshot snap = Snapshot::build({make_node("n", 1000, 1000)}, {});
  for (int i = 0; i < 6; ++i)  // past the per-node slack, so the port layout grows
    snap.add_pod(on_node(pod_with_ports({tcp("10.0.0." + std::to_string(i), 9000 + i)}), "n"), 0);
  const Pod incoming = pod_with_ports({tcp("", 9005)});
  intern_pod_resources(snap, incoming);
  const ProfilePlan plan = make_profile_plan(filter_only_profile(kPlugin));
  PodQuery q = prepare_pod_query(incoming, snap, plan, TieBreak::First, 0);
  EvalRequest req;
  req.want_verdicts = true;
  EvalResult out;
  make_cpu_backend()->evaluate(snap, q, req, out);
  EXPECT_EQ(out.verdicts.at(0).code, Code::Unschedulable);
  EXPECT_EQ(out.num_feasible, 0u);
}

}  // namespace
}  // namespace bulkscore
