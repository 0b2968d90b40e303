#include "plugins/toleration.hpp"

namespace bulkscore {

TolerationRule compile_toleration(const Toleration& t, const StringDict& dict) {
  TolerationRule r{};
  auto id_or_nomatch = [&](const std::string& s) {
    const int32_t id = dict.find(s);
    return id == kNoId ? TolerationRule::kNoMatch : id;
  };
  r.key = t.key.empty() ? kNoId : id_or_nomatch(t.key);
  r.value = id_or_nomatch(t.value);
  if (t.effect.empty())
    r.effect = -1;
  else if (t.effect == "NoSchedule")
    r.effect = static_cast<int32_t>(TaintEffect::NoSchedule);
  else if (t.effect == "PreferNoSchedule")
    r.effect = static_cast<int32_t>(TaintEffect::PreferNoSchedule);
  else if (t.effect == "NoExecute")
    r.effect = static_cast<int32_t>(TaintEffect::NoExecute);
  else
    r.effect = TolerationRule::kNoMatch;
  if (t.op.empty() || t.op == "Equal")
    r.op = TolerationRule::kEqual;
  else if (t.op == "Exists")
    r.op = TolerationRule::kExists;
  else
    r.op = TolerationRule::kNever;
  return r;
}

std::vector<TolerationRule> compile_tolerations(const std::vector<Toleration>& ts, const StringDict& dict) {
  std::vector<TolerationRule> out;
  out.reserve(ts.size());
  for (const auto& t : ts) out.push_back(compile_toleration(t, dict));
  return out;
}

bool toleration_tolerates(const Toleration& t, const Taint& taint) {
  if (!t.effect.empty() && t.effect != taint.effect) return false;
  if (!t.key.empty() && t.key != taint.key) return false;
  if (t.op == "Exists") return true;
  if (t.op.empty() || t.op == "Equal") return t.value == taint.value;
  return false;
}

}  // namespace bulkscore
