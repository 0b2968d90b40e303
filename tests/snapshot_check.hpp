// A snapshot decoded column by column into strings, compared with another
// (a fresh build, the same cluster reached another way), and a host mirror
// driven by MirrorSync as a device mirror is: the checks behind "equal to a
// fresh build" and "the mirror is exact" (test_snapshot.cpp, the undo
// equivalence of test_reserve_undo.cpp).
#pragma once

#include <algorithm>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "host/input/labels.hpp"
#include "host/snapshot/mirror_sync.hpp"
#include "host/snapshot/snapshot.hpp"

namespace bulkscore::snapshot_check {

// ---- decoding: a snapshot as strings, column by column ----
//
// Two snapshots of the same nodes and pods may number strings, images and
// resources differently and keep different slack, so "equal to a fresh
// build" compares what the columns mean: each column of columns() decoded
// per node (entry n is node n), ids turned back into strings. Derived columns
// (image masks, parsed integers, offsets of slotted ranges) decode as "ok"
// when they agree with what they are derived from. Every column must have a
// decoder: a new column fails these tests until it gets one.

using Decoded = std::map<std::string, std::vector<std::string>>;

inline std::string upstream_zone_key(const StringMap& labels) {
  auto get = [&](const char* beta, const char* ga) {
    auto it = labels.find(beta);
    if (it == labels.end()) it = labels.find(ga);
    return it == labels.end() ? std::string() : it->second;
  };
  const std::string region = get("failure-domain.beta.kubernetes.io/region", "topology.kubernetes.io/region");
  const std::string zone = get("failure-domain.beta.kubernetes.io/zone", "topology.kubernetes.io/zone");
  return region.empty() && zone.empty() ? std::string() : region + "|" + zone;
}

inline std::string join(std::vector<std::string> parts, bool sorted) {
  if (sorted) std::sort(parts.begin(), parts.end());
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : ",") + p;
  return "[" + out + "]";
}

inline Decoded decode(const Snapshot& s) {
  Decoded d;
  const SnapshotView v = s.view();
  const uint32_t N = s.num_nodes();
  auto str = [&](int32_t id) { return id == kNoId ? std::string("<none>") : s.strings().str(id); };
  auto per_node = [&](const char* name, auto fn) {
    auto& out = d[name];
    for (uint32_t n = 0; n < N; ++n) out.push_back(fn(n));
  };
  auto resources = [&](const int64_t* col) {
    return [&, col](uint32_t n) {
      std::vector<std::string> parts;
      for (uint32_t r = 0; r < s.num_resources(); ++r)
        if (col[static_cast<size_t>(r) * N + n] != 0)
          parts.push_back(s.resource_name(r) + "=" + std::to_string(col[static_cast<size_t>(r) * N + n]));
      return join(parts, true);
    };
  };
  per_node("allocatable", resources(v.allocatable));
  // Each inverse as set_allocatable writes it: "ok", or the entries that differ.
  per_node("allocatable_inverse", [&](uint32_t n) {
    std::string bad;
    for (uint32_t r = 0; r < s.num_resources(); ++r) {
      const size_t at = static_cast<size_t>(r) * N + n;
      const int64_t a = v.allocatable[at];
      const double want = a > 0 ? 1.0 / static_cast<double>(a) : 0.0;
      if (v.allocatable_inverse[at] != want) bad += s.resource_name(r) + " ";
    }
    return bad.empty() ? std::string("ok") : "wrong: " + bad;
  });
  per_node("requested", resources(v.requested));
  per_node("nonzero_requested", [&](uint32_t n) {
    return std::to_string(v.nonzero_requested[n]) + "," + std::to_string(v.nonzero_requested[N + n]);
  });
  per_node("allowed_pods", [&](uint32_t n) { return std::to_string(v.allowed_pods[n]); });
  per_node("pod_count", [&](uint32_t n) { return std::to_string(v.pod_count[n]); });
  per_node("topology_counts", [&](uint32_t n) {
    std::vector<std::string> parts;
    for (uint32_t m = 0; m < v.num_topology_matchers; ++m) parts.push_back(std::to_string(v.topology_count(m, n)));
    return join(parts, false);
  });
  per_node("term_counts", [&](uint32_t n) {
    // A group has a row while it keeps by_rank, which depends on history
    // (built at an eighth of the key's values, dropped below a sixteenth):
    // decoded is what a row must hold, the term's non-zero occurrences on
    // the node, read from the row where the group has one and from its
    // domains where it could have one but has not; named by the term (rows
    // follow the groups' order).
    std::vector<std::string> parts;
    for (const auto& g : s.existing_affinity_terms()) {
      if (g.kind != Snapshot::ExistingAffinityTerm::kRequiredAntiAffinity || g.dense_slot < 0 ||
          !s.dense_label_one_node_per_value(g.dense_slot))
        continue;
      int64_t count = 0;
      if (g.node_row >= 0) {
        count = v.term_count(static_cast<uint32_t>(g.node_row), n);
      } else {
        const int32_t value = v.dense_labels[static_cast<size_t>(g.dense_slot) * N + n];
        const auto it = g.domains.find(value);
        count = it == g.domains.end() ? 0 : it->second;
      }
      if (count == 0) continue;
      std::string term = g.topology_key + "/";
      for (const auto& ns : g.namespaces) term += ns + ";";
      if (g.selector)
        for (const auto& [k, val] : g.selector->match_labels) term += k + ":" + val + ";";
      parts.push_back(term + "=" + std::to_string(count));
    }
    return join(parts, true);
  });
  per_node("unschedulable", [&](uint32_t n) { return std::to_string(v.unschedulable[n]); });
  {
    // cordoned_nodes(), kept beside the column: "ok" where it counts its 1s.
    uint32_t cordoned = 0;
    for (uint32_t n = 0; n < N; ++n) cordoned += v.unschedulable[n];
    d["cordoned_nodes"] = {cordoned == s.cordoned_nodes()
                               ? std::string("ok")
                               : "wrong: " + std::to_string(s.cordoned_nodes()) + " for " + std::to_string(cordoned)};
  }
  per_node("node_name_id", [&](uint32_t n) { return str(v.node_name_id[n]); });

  auto sorted_pairs = [&](const int32_t* keys, const int32_t* values, uint32_t first, uint32_t last) {
    std::vector<std::string> parts;
    for (uint32_t i = first; i < last; ++i) {
      parts.push_back(str(keys[i]) + "=" + str(values[i]));
      if (i > first && keys[i - 1] >= keys[i]) parts.push_back("<keys not sorted by id>");
    }
    return join(parts, true);
  };
  per_node("label_offsets", [&](uint32_t n) { return std::to_string(v.label_offsets[n + 1] - v.label_offsets[n]); });
  per_node("label_keys", [&](uint32_t n) {
    return sorted_pairs(v.label_keys, v.label_values, v.label_offsets[n], v.label_offsets[n + 1]);
  });
  d["label_values"] = d["label_keys"];
  per_node("taint_offsets", [&](uint32_t n) { return std::to_string(v.taint_offsets[n + 1] - v.taint_offsets[n]); });
  per_node("taint_keys", [&](uint32_t n) {
    std::vector<std::string> parts;
    for (uint32_t i = v.taint_offsets[n]; i < v.taint_offsets[n + 1]; ++i)
      parts.push_back(str(v.taint_keys[i]) + "=" + str(v.taint_values[i]) + ":" + std::to_string(v.taint_effects[i]));
    return join(parts, false);
  });
  d["taint_values"] = d["taint_effects"] = d["taint_keys"];
  per_node("image_offsets", [&](uint32_t n) { return std::to_string(v.image_offsets[n + 1] - v.image_offsets[n]); });
  per_node("image_ids", [&](uint32_t n) {
    std::vector<std::string> parts;
    for (uint32_t i = v.image_offsets[n]; i < v.image_offsets[n + 1]; ++i) {
      parts.push_back(s.image_name(v.image_ids[i]));
      if (i > v.image_offsets[n] && v.image_ids[i - 1] >= v.image_ids[i]) parts.push_back("<ids not sorted>");
    }
    return join(parts, true);
  });
  per_node("image_masks", [&](uint32_t n) {
    uint64_t want = 0;
    for (uint32_t i = v.image_offsets[n]; i < v.image_offsets[n + 1]; ++i)
      if (v.image_ids[i] < 64) want |= uint64_t(1) << v.image_ids[i];
    return std::string(want == v.image_masks[n] ? "ok" : "mask disagrees with image_ids");
  });

  auto slotted_ok = [&](const uint32_t* offsets, uint32_t n, uint32_t used) {
    return std::string(offsets[n] <= offsets[n + 1] && used <= offsets[n + 1] - offsets[n] ? "ok" : "overfull");
  };
  per_node("port_offsets", [&](uint32_t n) { return slotted_ok(v.port_offsets, n, v.port_counts[n]); });
  per_node("port_counts", [&](uint32_t n) { return std::to_string(v.port_counts[n]); });
  per_node("ports", [&](uint32_t n) {
    std::vector<std::string> parts;
    for (uint32_t i = v.port_offsets[n]; i < v.port_offsets[n + 1]; ++i) {
      const HostPortEntry& e = v.ports[i];
      if (i < v.port_offsets[n] + v.port_counts[n])
        parts.push_back(str(e.ip) + "/" + str(e.protocol) + "/" + std::to_string(e.port));
      else if (e.ip != kNoId || e.protocol != kNoId || e.port != 0)
        parts.push_back("<free slot not cleared>");
    }
    return join(parts, false);
  });

  {
    std::string ok = "ok";
    if (s.strings().int_values().size() != s.strings().size() || s.strings().int_ok().size() != s.strings().size())
      ok = "size differs from the dictionary";
    for (int32_t id = 0; ok == "ok" && static_cast<size_t>(id) < s.strings().size(); ++id) {
      int64_t want = 0;
      const bool parses = parse_go_int64(s.strings().str(id), want);
      if (v.string_int_ok[id] != (parses ? 1 : 0) || (parses && v.string_int[id] != want))
        ok = "wrong for \"" + s.strings().str(id) + "\"";
    }
    d["string_int"] = d["string_int_ok"] = {ok};
  }
  per_node("dense_labels", [&](uint32_t n) {
    std::vector<std::string> parts;
    for (uint32_t slot = 0; slot < v.num_dense_labels; ++slot)
      parts.push_back(str(s.dense_label_key(slot)) + "=" + str(v.dense_labels[static_cast<size_t>(slot) * N + n]));
    return join(parts, true);
  });
  // A rank decodes to the value it ranks (ranks themselves depend on ids).
  per_node("dense_label_ranks", [&](uint32_t n) {
    std::vector<std::string> parts;
    for (uint32_t slot = 0; slot < v.num_dense_labels; ++slot) {
      const int32_t r = v.dense_label_ranks[static_cast<size_t>(slot) * N + n];
      parts.push_back(str(s.dense_label_key(slot)) + "=" +
                      (r < 0 ? std::string("-") : str(s.dense_label_values(static_cast<int32_t>(slot))[static_cast<size_t>(r)])));
    }
    return join(parts, true);
  });

  per_node("pod_offsets",
           [&](uint32_t n) { return slotted_ok(v.pod_offsets, n, static_cast<uint32_t>(v.pod_count[n])); });
  auto per_pod = [&](const char* name, auto fn) {
    per_node(name, [&](uint32_t n) {
      std::vector<std::string> parts;
      for (uint32_t slot = v.pod_offsets[n]; slot < v.pod_offsets[n] + static_cast<uint32_t>(v.pod_count[n]); ++slot)
        parts.push_back(fn(slot));
      return join(parts, false);
    });
  };
  per_pod("pod_namespace", [&](uint32_t slot) { return str(v.pod_namespace[slot]); });
  per_pod("pod_flags", [&](uint32_t slot) { return std::to_string(v.pod_flags[slot]); });
  per_pod("pod_label_counts", [&](uint32_t slot) { return std::to_string(v.pod_label_counts[slot]); });
  per_pod("pod_label_keys", [&](uint32_t slot) {
    return sorted_pairs(v.pod_label_keys, v.pod_label_values, v.pod_label_offsets[slot],
                        v.pod_label_offsets[slot] + v.pod_label_counts[slot]);
  });
  d["pod_label_values"] = d["pod_label_keys"];
  // Free slots are cleared; a node's pods' labels follow each other; label
  // entries no pod owns are cleared.
  per_node("pod_node", [&](uint32_t n) {
    for (uint32_t slot = v.pod_offsets[n]; slot < v.pod_offsets[n + 1]; ++slot) {
      const bool used = slot < v.pod_offsets[n] + static_cast<uint32_t>(v.pod_count[n]);
      if (used && v.pod_node[slot] != static_cast<int32_t>(n)) return std::string("wrong node");
      if (!used && (v.pod_node[slot] != kNoId || v.pod_namespace[slot] != kNoId || v.pod_flags[slot] != 0 ||
                    v.pod_label_offsets[slot] != 0 || v.pod_label_counts[slot] != 0))
        return std::string("free slot not cleared");
    }
    return std::string("ok");
  });
  per_node("pod_label_offsets", [&](uint32_t n) {
    for (uint32_t slot = v.pod_offsets[n] + 1; slot < v.pod_offsets[n] + static_cast<uint32_t>(v.pod_count[n]); ++slot)
      if (v.pod_label_offsets[slot] != v.pod_label_offsets[slot - 1] + v.pod_label_counts[slot - 1])
        return std::string("labels not consecutive");
    return std::string("ok");
  });
  {
    const auto cols = s.columns();
    size_t label_entries = 0;
    for (const auto& c : cols)
      if (std::string(c.name) == "pod_label_keys") label_entries = c.bytes / sizeof(int32_t);
    std::vector<uint8_t> owned(label_entries, 0);
    for (uint32_t slot = 0; slot < v.num_pod_slots; ++slot)
      for (uint32_t i = 0; i < v.pod_label_counts[slot]; ++i) owned[v.pod_label_offsets[slot] + i] = 1;
    std::string ok = "ok";
    for (size_t i = 0; i < label_entries; ++i)
      if (!owned[i] && (v.pod_label_keys[i] != kNoId || v.pod_label_values[i] != kNoId)) ok = "free label not cleared";
    d["pod_label_keys"].push_back(ok);
    d["pod_label_values"].push_back(ok);
  }

  // Devices: each node's (units, free) in index order.
  per_node("device_offsets", [&](uint32_t n) { return std::to_string(v.device_offsets[n + 1] - v.device_offsets[n]); });
  per_node("device_units", [&](uint32_t n) {
    std::vector<std::string> parts;
    for (uint32_t d = v.device_offsets[n]; d < v.device_offsets[n + 1]; ++d) parts.push_back(std::to_string(v.device_units[d]));
    return join(parts, false);
  });
  per_node("device_free", [&](uint32_t n) {
    std::vector<std::string> parts;
    for (uint32_t d = v.device_offsets[n]; d < v.device_offsets[n + 1]; ++d) parts.push_back(std::to_string(v.device_free[d]));
    return join(parts, false);
  });

  per_node("device_pod_classes", [&](uint32_t n) { return std::to_string(v.device_pod_classes[n]); });
  // Shared device groups: per node, the free devices of each row's resource.
  per_node("group_free", [&](uint32_t n) {
    std::vector<std::string> parts;
    for (uint32_t row = 0; row < v.num_group_device_types; ++row)
      parts.push_back(s.group_device_type(row) + "=" + std::to_string(v.group_free_devices(row, n)));
    return join(parts, false);
  });

  // Node data: per node, each column's entry by column name (reason texts
  // for fails, "-" without data).
  const auto node_data = [&](Snapshot::NodeDataKind kind) {
    return [&s, kind](uint32_t n) {
      std::vector<std::string> parts;
      for (uint32_t c = 0; c < s.num_node_data_columns(); ++c) {
        if (s.node_data_column_kind(c) != kind) continue;
        const uint8_t e = s.node_data_entry(c, n);
        std::string text = e == kNodeDataNone ? "-" : std::to_string(e);
        if (kind == Snapshot::NodeDataKind::kFilter && e >= 1 && e <= kMaxNodeDataReasons)
          text = s.node_data_reason(c, e);
        parts.push_back(s.node_data_column_name(c) + "=" + text);
      }
      return join(parts, false);
    };
  };
  per_node("node_filter_data", node_data(Snapshot::NodeDataKind::kFilter));
  per_node("node_score_data", node_data(Snapshot::NodeDataKind::kScore));

  // Host-side parts and the view's counts.
  // (The node-tree order is compared on its own: after node changes it is
  // upstream's node tree, which a fresh build does not always reproduce.)
  per_node("host: node_name", [&](uint32_t n) { return s.node_name(n); });
  per_node("host: pods_on_node", [&](uint32_t n) {
    std::vector<std::string> parts;
    for (uint32_t id : s.pods_on_node(n)) {
      const Pod& pod = s.pod(id);
      std::string ok = s.has_pod(id) && s.pod_node(id) == n && pod.node_name == s.node_name(n) &&
                               s.find_pod(pod.namespace_name, pod.name) != Snapshot::kNoPod &&
                               s.pod_priority(id) == pod.priority
                           ? ""
                           : " <pod index broken>";
      parts.push_back(pod.key() + ok);
    }
    return join(parts, false);
  });
  d["host: num_pods"] = {std::to_string(s.num_pods())};
  for (int32_t id = 0; static_cast<size_t>(id) < s.num_images(); ++id)
    if (s.image_num_nodes(id) > 0)
      d["host: images"].push_back(s.image_name(id) + " on " + std::to_string(s.image_num_nodes(id)) + ", " +
                                  std::to_string(s.image_size(id)) + " bytes");
  std::sort(d["host: images"].begin(), d["host: images"].end());
  d["view: counts"] = {std::to_string(v.num_nodes), str(v.any_ip_id), std::to_string(v.num_dense_labels)};
  {
    // The view's pointers are the columns' data, in table order.
    std::vector<const void*> data;
    for (const auto& c : s.columns()) data.push_back(c.data);
    const SnapshotView over = s.view_over(data);
    const bool same = std::memcmp(&over, &v, sizeof v) == 0;
    d["view: pointers"] = {same ? "ok" : "view() and columns() disagree"};
  }
  return d;
}

// The first difference between decoded snapshots, or "".
inline std::string first_difference(const Decoded& want, const Decoded& got) {
  for (const auto& [name, w] : want) {
    const auto it = got.find(name);
    if (it == got.end()) return "column " + name + " missing";
    const auto& g = it->second;
    for (size_t i = 0; i < std::max(w.size(), g.size()); ++i) {
      const std::string a = i < w.size() ? w[i] : "<absent>", b = i < g.size() ? g[i] : "<absent>";
      if (a != b) return "column " + name + " [" + std::to_string(i) + "]: want " + a + ", got " + b;
    }
  }
  for (const auto& kv : got)
    if (!want.count(kv.first)) return "column " + kv.first + " unexpected";
  return "";
}

inline void expect_every_column_decoded(const Snapshot& s) {
  const Decoded d = decode(s);
  for (const auto& c : s.columns()) EXPECT_TRUE(d.count(c.name)) << "no decoder for column " << c.name;
  // Host side: each dense value's nodes, ascending, are those of its rank.
  const SnapshotView v = s.view();
  for (uint32_t slot = 0; slot < s.num_dense_labels(); ++slot)
    for (size_t r = 0; r < s.dense_label_values(static_cast<int32_t>(slot)).size(); ++r) {
      std::vector<uint32_t> want;
      for (uint32_t n = 0; n < s.num_nodes(); ++n)
        if (v.dense_rank(static_cast<int32_t>(slot), n) == static_cast<int32_t>(r)) want.push_back(n);
      const auto [first, last] = s.dense_label_nodes(static_cast<int32_t>(slot), static_cast<int32_t>(r));
      EXPECT_EQ(std::vector<uint32_t>(first, last), want) << "dense slot " << slot << ", rank " << r;
    }
}

// Bit-for-bit: every column's bytes; kAppend columns (the dictionary's) may
// have grown, their old bytes a prefix.
inline std::string first_byte_difference(const std::vector<std::vector<uint8_t>>& want, const Snapshot& got) {
  const auto cols = got.columns();
  if (cols.size() != want.size()) return "column count";
  for (size_t c = 0; c < cols.size(); ++c) {
    const bool append = cols[c].kind == Snapshot::ColumnKind::kAppend;
    if (append ? cols[c].bytes < want[c].size() : cols[c].bytes != want[c].size())
      return std::string("column ") + cols[c].name + ": " + std::to_string(cols[c].bytes) + " bytes, want " +
             std::to_string(want[c].size());
    const auto* bytes = static_cast<const uint8_t*>(cols[c].data);
    for (size_t i = 0; i < want[c].size(); ++i)
      if (bytes[i] != want[c][i])
        return std::string("column ") + cols[c].name + " element " + std::to_string(i / cols[c].element_bytes);
  }
  return "";
}

inline std::vector<std::vector<uint8_t>> column_bytes(const Snapshot& s) {
  std::vector<std::vector<uint8_t>> out;
  for (const auto& c : s.columns()) {
    const auto* p = static_cast<const uint8_t*>(c.data);
    out.emplace_back(p, p + c.bytes);
  }
  return out;
}

// A mirror in host memory driven by MirrorSync exactly as the CUDA backend's
// is: after each sync its bytes must equal the snapshot's.
struct HostMirror {
  MirrorSync sync;
  std::vector<std::vector<uint8_t>> copies;
  size_t everything = 0, whole = 0, tails = 0, ranges = 0;
  std::string error;

  void update(const Snapshot& s) {
    const auto cols = s.columns();
    const MirrorSync::Plan plan = sync.plan(s, cols);
    auto copy_whole = [&](uint32_t c) {
      const auto* p = static_cast<const uint8_t*>(cols[c].data);
      copies[c].assign(p, p + cols[c].bytes);
    };
    if (plan.everything) {
      copies.assign(cols.size(), {});
      for (uint32_t c = 0; c < cols.size(); ++c) copy_whole(c);
      ++everything;
    } else {
      for (uint32_t c : plan.whole) copy_whole(c);
      whole += plan.whole.size();
      for (const auto& t : plan.tails) {
        if (copies[t.column].size() != t.from) error = std::string("tail of ") + cols[t.column].name + " misplaced";
        copies[t.column].resize(cols[t.column].bytes);
        std::memcpy(copies[t.column].data() + t.from, static_cast<const uint8_t*>(cols[t.column].data) + t.from,
                    cols[t.column].bytes - t.from);
      }
      tails += plan.tails.size();
      for (const auto& r : plan.ranges) {
        const size_t eb = cols[r.column].element_bytes;
        for (uint32_t i = 0; i < r.count; ++i) {
          const size_t at = (r.first + i * r.stride) * eb;
          if (at + eb > copies[r.column].size()) {
            error = std::string("range outside column ") + cols[r.column].name;
            return;
          }
          std::memcpy(copies[r.column].data() + at, static_cast<const uint8_t*>(cols[r.column].data) + at, eb);
        }
      }
      ranges += plan.ranges.size();
    }
    sync.synced(s, cols);
  }

  std::string first_difference(const Snapshot& s) const {
    if (!error.empty()) return error;
    std::vector<std::vector<uint8_t>> exact = copies;
    const auto cols = s.columns();
    for (size_t c = 0; c < cols.size() && c < exact.size(); ++c)
      if (cols[c].bytes != exact[c].size())
        return std::string("mirror of ") + cols[c].name + " has " + std::to_string(exact[c].size()) + " bytes";
    return first_byte_difference(exact, s);
  }
};

}  // namespace bulkscore::snapshot_check
