// bulkscore's C++ API: one include for an embedder (docs/library.md).
// The engine (Engine: load, events, schedule, peek, rank, explain), the
// configuration (KubeSchedulerConfiguration v1), the Kubernetes JSON
// readers and the decision's JSON. Compile with -ffp-contract=off (the
// installed bulkscore::bulkscore target carries it): the header rules are
// compiled into your code too, and a contracted FMA changes float64 scores.
#pragma once

#include "bulkscore/version.h"
#include "host/engine/engine.hpp"
#include "host/engine/result_json.hpp"
#include "host/input/config.hpp"
#include "host/input/k8s_json.hpp"
