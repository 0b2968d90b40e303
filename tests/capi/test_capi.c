/* The C ABI from C11 (include/bulkscore/bulkscore.h), linked against
 * libbulkscore.so: every call's status and message, results, events, rank,
 * warnings and metrics, and the errors a careless caller makes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bulkscore/bulkscore.h"

static int failures = 0;

#define CHECK(cond)                                                                            \
  do {                                                                                         \
    if (!(cond)) {                                                                             \
      fprintf(stderr, "%s:%d: CHECK(%s) failed (last error: %s)\n", __FILE__, __LINE__, #cond, \
              bs_last_error());                                                                \
      ++failures;                                                                              \
    }                                                                                          \
  } while (0)

#define CHECK_STATUS(call, want)                                                                        \
  do {                                                                                                  \
    int got_ = (call);                                                                                  \
    if (got_ != (want)) {                                                                               \
      fprintf(stderr, "%s:%d: %s returned %s, expected %s (last error: %s)\n", __FILE__, __LINE__, #call, \
              bs_status_name(got_), bs_status_name(want), bs_last_error());                              \
      ++failures;                                                                                       \
    }                                                                                                   \
  } while (0)

static const char kNodes[] =
    "{\"apiVersion\":\"v1\",\"kind\":\"NodeList\",\"items\":["
    "{\"metadata\":{\"name\":\"n1\",\"labels\":{\"topology.kubernetes.io/zone\":\"a\"}},"
    "\"status\":{\"allocatable\":{\"cpu\":\"4\",\"memory\":\"8Gi\",\"pods\":\"110\"}}},"
    "{\"metadata\":{\"name\":\"n2\",\"labels\":{\"topology.kubernetes.io/zone\":\"b\"}},"
    "\"status\":{\"allocatable\":{\"cpu\":\"2\",\"memory\":\"8Gi\",\"pods\":\"110\"}}}]}";

static const char kPods[] =
    "{\"apiVersion\":\"v1\",\"kind\":\"PodList\",\"items\":["
    "{\"metadata\":{\"name\":\"running\",\"namespace\":\"default\",\"uid\":\"u-running\"},"
    "\"spec\":{\"nodeName\":\"n1\",\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":{\"cpu\":\"3\"}}}]},"
    "\"status\":{\"phase\":\"Running\"}}]}";

static const char kWeb[] =
    "{\"metadata\":{\"name\":\"web\",\"namespace\":\"default\",\"uid\":\"u-web\",\"labels\":{\"app\":\"web\"}},"
    "\"spec\":{\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":{\"cpu\":\"500m\"}}}]}}";

static const char kWebBound[] =
    "{\"metadata\":{\"name\":\"web\",\"namespace\":\"default\",\"uid\":\"u-web\",\"labels\":{\"app\":\"web\"}},"
    "\"spec\":{\"nodeName\":\"n2\",\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":{\"cpu\":\"500m\"}}}]},"
    "\"status\":{\"phase\":\"Running\"}}";

static const char kHuge[] =
    "{\"metadata\":{\"name\":\"huge\",\"namespace\":\"default\",\"uid\":\"u-huge\"},"
    "\"spec\":{\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":{\"cpu\":\"64\"}}}]}}";

static const char kNode3[] =
    "{\"metadata\":{\"name\":\"n3\",\"labels\":{\"topology.kubernetes.io/zone\":\"c\"}},"
    "\"status\":{\"allocatable\":{\"cpu\":\"8\",\"memory\":\"8Gi\",\"pods\":\"110\"}}}";

static const char kService[] =
    "{\"apiVersion\":\"v1\",\"kind\":\"Service\",\"metadata\":{\"name\":\"web\",\"namespace\":\"default\"},"
    "\"spec\":{\"selector\":{\"app\":\"web\"}}}";

/* NodeData reads the embedder's columns: licenses (filter) and costs (score, reversed). */
static const char kNodeDataConfig[] =
    "apiVersion: kubescheduler.config.k8s.io/v1\n"
    "kind: KubeSchedulerConfiguration\n"
    "profiles:\n"
    "- schedulerName: default-scheduler\n"
    "  plugins:\n"
    "    filter:\n"
    "      enabled: [{name: NodeData}]\n"
    "    score:\n"
    "      disabled: [{name: '*'}]\n"
    "      enabled: [{name: NodeData, weight: 2}]\n"
    "  pluginConfig:\n"
    "  - name: NodeData\n"
    "    args: {filterColumn: example.com/license, scoreColumn: example.com/cost, scoreNormalization: Reverse}\n";

static const char kSmall[] =
    "{\"metadata\":{\"name\":\"small\",\"namespace\":\"default\",\"uid\":\"u-small\"},"
    "\"spec\":{\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":{\"cpu\":\"100m\"}}}]}}";

static void node_data_calls(void) {
  bs_engine_options options;
  bs_engine_options_init(&options);
  options.backend = "cpu";
  options.tie_break = BS_TIE_BREAK_FIRST;
  bs_engine* e = NULL;
  CHECK_STATUS(bs_engine_create(kNodeDataConfig, sizeof kNodeDataConfig - 1, &options, &e), BS_OK);
  if (!e) return;
  CHECK_STATUS(bs_engine_load(e, kNodes, sizeof kNodes - 1, kPods, sizeof kPods - 1, NULL, 0), BS_OK);

  /* Careless calls. */
  CHECK_STATUS(bs_engine_set_node_filter(NULL, "example.com/license", "n1", 1, NULL), BS_INVALID_ARGUMENT);
  CHECK_STATUS(bs_engine_set_node_filter(e, NULL, "n1", 1, NULL), BS_INVALID_ARGUMENT);
  CHECK_STATUS(bs_engine_set_node_score(e, "example.com/cost", NULL, 1), BS_INVALID_ARGUMENT);
  CHECK_STATUS(bs_engine_set_node_scores(e, "example.com/cost", NULL, NULL, 2), BS_INVALID_ARGUMENT);
  CHECK_STATUS(bs_engine_clear_node_data(e, NULL, NULL), BS_INVALID_ARGUMENT);
  /* Statuses. */
  CHECK_STATUS(bs_engine_set_node_score(e, "example.com/cost", "n9", 5), BS_NOT_FOUND);
  CHECK_STATUS(bs_engine_set_node_score(e, "example.com/cost", "n1", 101), BS_INVALID_INPUT);
  CHECK(strstr(bs_last_error(), "[0, 100]") != NULL);
  CHECK_STATUS(bs_engine_set_node_filter(e, "not a name!", "n1", 1, NULL), BS_INVALID_INPUT);
  CHECK_STATUS(bs_engine_clear_node_data(e, "example.com/license", NULL), BS_NOT_FOUND);

  /* n2 has more room, but its license expired: n1, whatever the cost. */
  CHECK_STATUS(bs_engine_set_node_filter(e, "example.com/license", "n2", 0, "node(s) had an expired license"),
               BS_OK);
  CHECK_STATUS(bs_engine_set_node_score(e, "example.com/license", "n1", 5), BS_INVALID_INPUT); /* a filter column */
  bs_schedule_result* r = NULL;
  CHECK_STATUS(bs_engine_peek(e, kSmall, sizeof kSmall - 1, &r), BS_OK);
  if (r) {
    CHECK(strcmp(r->node, "n1") == 0);
    bs_schedule_result_free(r);
  }
  /* Both fail (one with the default reason): the FitError names them. */
  CHECK_STATUS(bs_engine_set_node_filter(e, "example.com/license", "n1", 0, NULL), BS_OK);
  CHECK_STATUS(bs_engine_peek(e, kSmall, sizeof kSmall - 1, &r), BS_OK);
  if (r) {
    CHECK(r->code == 2);
    CHECK(strcmp(r->message,
                 "0/2 nodes are available: 1 node(s) didn't pass example.com/license, 1 node(s) had an expired "
                 "license.") == 0);
    bs_schedule_result_free(r);
  }
  /* Bulk: both pass; then the costs decide (reversed: the cheaper wins). */
  const char* nodes[] = {"n1", "n2"};
  const int pass[] = {1, 1};
  CHECK_STATUS(bs_engine_set_node_filters(e, "example.com/license", nodes, pass, NULL, 2), BS_OK);
  const int64_t costs[] = {10, 90};
  CHECK_STATUS(bs_engine_set_node_scores(e, "example.com/cost", nodes, costs, 2), BS_OK);
  const int64_t bad[] = {10, 900};
  CHECK_STATUS(bs_engine_set_node_scores(e, "example.com/cost", nodes, bad, 2), BS_INVALID_INPUT);
  bs_ranking* ranking = NULL;
  CHECK_STATUS(bs_engine_rank(e, kSmall, sizeof kSmall - 1, 2, &ranking), BS_OK);
  if (ranking) {
    CHECK(ranking->num_nodes == 2);
    CHECK(ranking->num_plugins == 1 && strcmp(ranking->plugins[0], "NodeData") == 0);
    CHECK(strcmp(ranking->nodes[0].node, "n1") == 0);
    CHECK(ranking->nodes[0].raw[0] == 10); /* 900 was refused, whole */
    CHECK(ranking->nodes[0].total == 2 * (100 - 100 * 10 / 90));
    bs_ranking_free(ranking);
  }
  /* Cleared: no data, every node passes (filterDefault Pass) and scores 0. */
  CHECK_STATUS(bs_engine_clear_node_data(e, "example.com/cost", "n1"), BS_OK);
  CHECK_STATUS(bs_engine_clear_node_data(e, "example.com/cost", "n9"), BS_NOT_FOUND);
  CHECK_STATUS(bs_engine_clear_node_data(e, "example.com/license", NULL), BS_OK);
  const int fail_both[] = {0, 0};
  const char* reasons[] = {"node(s) were in maintenance", NULL};
  CHECK_STATUS(bs_engine_set_node_filters(e, "example.com/license", nodes, fail_both, reasons, 2), BS_OK);
  CHECK_STATUS(bs_engine_peek(e, kSmall, sizeof kSmall - 1, &r), BS_OK);
  if (r) {
    CHECK(strcmp(r->message,
                 "0/2 nodes are available: 1 node(s) didn't pass example.com/license, 1 node(s) were in "
                 "maintenance.") == 0);
    bs_schedule_result_free(r);
  }
  bs_engine_destroy(e);
}

/* Preemption through the C ABI: PriorityClass and PodDisruptionBudget
 * objects as events, and a result that names its nominated node, victims
 * and PDB violations (fields and json). */
static const char kOneNode[] =
    "{\"apiVersion\":\"v1\",\"kind\":\"NodeList\",\"items\":["
    "{\"metadata\":{\"name\":\"n1\"},\"status\":{\"allocatable\":{\"cpu\":\"2\",\"memory\":\"8Gi\",\"pods\":\"110\"}}}]}";
static const char kLowPods[] =
    "{\"apiVersion\":\"v1\",\"kind\":\"PodList\",\"items\":["
    "{\"metadata\":{\"name\":\"low\",\"namespace\":\"default\",\"uid\":\"u-low\",\"labels\":{\"app\":\"low\"}},"
    "\"spec\":{\"nodeName\":\"n1\",\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":{\"cpu\":\"2\"}}}]},"
    "\"status\":{\"phase\":\"Running\"}}]}";
static const char kHigh[] =
    "{\"apiVersion\":\"scheduling.k8s.io/v1\",\"kind\":\"PriorityClass\",\"metadata\":{\"name\":\"high\"},"
    "\"value\":1000}";
static const char kHighChanged[] =
    "{\"apiVersion\":\"scheduling.k8s.io/v1\",\"kind\":\"PriorityClass\",\"metadata\":{\"name\":\"high\"},"
    "\"value\":2000}";
static const char kLowPdb[] =
    "{\"apiVersion\":\"policy/v1\",\"kind\":\"PodDisruptionBudget\",\"metadata\":{\"name\":\"low\","
    "\"namespace\":\"default\"},\"spec\":{\"minAvailable\":1,\"selector\":{\"matchLabels\":{\"app\":\"low\"}}},"
    "\"status\":{\"disruptionsAllowed\":0,\"currentHealthy\":1,\"desiredHealthy\":1,\"expectedPods\":1}}";
static const char kHi[] =
    "{\"metadata\":{\"name\":\"hi\",\"namespace\":\"default\",\"uid\":\"u-hi\"},"
    "\"spec\":{\"priorityClassName\":\"high\",\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":{\"cpu\":\"2\"}}}]}}";

static void preemption_calls(void) {
  bs_engine_options options;
  bs_engine_options_init(&options);
  options.backend = "cpu";
  bs_engine* e = NULL;
  CHECK_STATUS(bs_engine_create(NULL, 0, &options, &e), BS_OK);
  if (!e) return;
  CHECK_STATUS(bs_engine_load(e, kOneNode, sizeof kOneNode - 1, kLowPods, sizeof kLowPods - 1, NULL, 0), BS_OK);
  /* Without its class the pod is bad input, as admission would refuse it. */
  bs_schedule_result* r = NULL;
  CHECK_STATUS(bs_engine_schedule(e, kHi, sizeof kHi - 1, &r), BS_INVALID_INPUT);
  CHECK_STATUS(bs_engine_add_object(e, kHigh, sizeof kHigh - 1), BS_OK);
  CHECK_STATUS(bs_engine_add_object(e, kHigh, sizeof kHigh - 1), BS_ALREADY_EXISTS);
  CHECK_STATUS(bs_engine_update_object(e, kHighChanged, sizeof kHighChanged - 1), BS_INVALID_INPUT);
  CHECK_STATUS(bs_engine_add_object(e, kLowPdb, sizeof kLowPdb - 1), BS_OK);
  CHECK_STATUS(bs_engine_add_object(e, kLowPdb, sizeof kLowPdb - 1), BS_ALREADY_EXISTS);
  CHECK_STATUS(bs_engine_update_object(e, kLowPdb, sizeof kLowPdb - 1), BS_OK);
  /* rank's json shows the dry run. */
  bs_ranking* ranking = NULL;
  CHECK_STATUS(bs_engine_rank(e, kHi, sizeof kHi - 1, 3, &ranking), BS_OK);
  if (ranking) {
    CHECK(strstr(ranking->json, "\"nominatedNode\":\"n1\",\"decidedBy\":\"onlyCandidate\"") != NULL);
    bs_ranking_free(ranking);
  }
  CHECK_STATUS(bs_engine_schedule(e, kHi, sizeof kHi - 1, &r), BS_OK);
  if (r) {
    CHECK(r->code == 0);
    CHECK(strcmp(r->node, "n1") == 0);
    CHECK(strcmp(r->nominated_node, "n1") == 0);
    CHECK(r->num_victims == 1 && strcmp(r->victims[0], "default/low") == 0);
    CHECK(r->pdb_violations == 1);
    CHECK(strstr(r->json, ",\"nominatedNode\":\"n1\",\"victims\":[\"default/low\"],\"pdbViolations\":1}") != NULL);
    bs_schedule_result_free(r);
  }
  /* Nothing left to evict: no preemption fields. */
  static const char kHi2[] =
      "{\"metadata\":{\"name\":\"hi2\",\"namespace\":\"default\",\"uid\":\"u-hi2\"},"
      "\"spec\":{\"priorityClassName\":\"high\",\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":{\"cpu\":\"2\"}}}]}}";
  CHECK_STATUS(bs_engine_schedule(e, kHi2, sizeof kHi2 - 1, &r), BS_OK);
  if (r) {
    CHECK(r->code == 2);
    CHECK(r->nominated_node[0] == '\0' && r->num_victims == 0 && r->pdb_violations == 0);
    CHECK(strstr(r->json, "nominatedNode") == NULL);
    bs_schedule_result_free(r);
  }
  CHECK_STATUS(bs_engine_remove_object(e, "PodDisruptionBudget", "default", "low"), BS_OK);
  CHECK_STATUS(bs_engine_remove_object(e, "PodDisruptionBudget", "default", "low"), BS_NOT_FOUND);
  CHECK_STATUS(bs_engine_remove_object(e, "PriorityClass", NULL, "high"), BS_OK);
  CHECK_STATUS(bs_engine_remove_object(e, "PriorityClass", "", "high"), BS_NOT_FOUND);
  bs_engine_destroy(e);
}

/* Gang scheduling through the C ABI: a Workload and a Coscheduling PodGroup
 * as events, gangs placed all or nothing by bs_engine_schedule_all, the
 * group fields of the results, explain's group state, and a removed
 * Workload's members rejected as missing. */
static const char kFourCpus[] =
    "{\"apiVersion\":\"v1\",\"kind\":\"NodeList\",\"items\":["
    "{\"metadata\":{\"name\":\"n1\"},"
    "\"status\":{\"allocatable\":{\"cpu\":\"4\",\"memory\":\"8Gi\",\"pods\":\"110\"}}}]}";
static const char kNoPods[] = "{\"apiVersion\":\"v1\",\"kind\":\"PodList\",\"items\":[]}";
static const char kTrain[] =
    "{\"apiVersion\":\"scheduling.k8s.io/v1alpha1\",\"kind\":\"Workload\","
    "\"metadata\":{\"name\":\"train\",\"namespace\":\"default\"},\"spec\":{\"podGroups\":["
    "{\"name\":\"workers\",\"policy\":{\"gang\":{\"minCount\":2}}},{\"name\":\"driver\",\"policy\":{\"basic\":{}}}]}}";
static const char kBig[] =
    "{\"apiVersion\":\"scheduling.x-k8s.io/v1alpha1\",\"kind\":\"PodGroup\","
    "\"metadata\":{\"name\":\"big\",\"namespace\":\"default\"},\"spec\":{\"minMember\":3}}";
#define GANG_POD(name, ref)                                                                   \
  "{\"metadata\":{\"name\":\"" name "\",\"namespace\":\"default\",\"uid\":\"u-" name "\"" ref \
  "\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":{\"cpu\":\"1\"}}}]}}"
#define WORKER(name) GANG_POD(name, "},\"spec\":{\"workloadRef\":{\"name\":\"train\",\"podGroup\":\"workers\"},")
#define BIG(name) GANG_POD(name, ",\"labels\":{\"scheduling.x-k8s.io/pod-group\":\"big\"}},\"spec\":{")
#define POD_LIST(items) "{\"apiVersion\":\"v1\",\"kind\":\"PodList\",\"items\":[" items "]}"
static const char kTrainPods[] = POD_LIST(WORKER("w1") "," GANG_POD("x1", "},\"spec\":{") "," WORKER("w2"));
static const char kBigPods[] = POD_LIST(BIG("b1") "," BIG("b2") "," BIG("b3"));
static const char kB1[] = BIG("b1");
static const char kLatePods[] = POD_LIST(WORKER("w3"));

static void gang_calls(void) {
  bs_engine_options options;
  bs_engine_options_init(&options);
  options.backend = "cpu";
  options.tie_break = BS_TIE_BREAK_FIRST;
  bs_engine* e = NULL;
  CHECK_STATUS(bs_engine_create(NULL, 0, &options, &e), BS_OK);
  if (!e) return;
  CHECK_STATUS(bs_engine_load(e, kFourCpus, sizeof kFourCpus - 1, kNoPods, sizeof kNoPods - 1, NULL, 0), BS_OK);
  bs_schedule_results* rs = NULL;
  CHECK_STATUS(bs_engine_schedule_all(NULL, kTrainPods, sizeof kTrainPods - 1, &rs), BS_INVALID_ARGUMENT);
  CHECK_STATUS(bs_engine_schedule_all(e, kTrainPods, sizeof kTrainPods - 1, NULL), BS_INVALID_ARGUMENT);
  CHECK_STATUS(bs_engine_schedule_all(e, "{", 1, &rs), BS_INVALID_INPUT);
  CHECK(rs == NULL);

  /* The Workload's two podGroups are one object. */
  CHECK_STATUS(bs_engine_add_object(e, kTrain, sizeof kTrain - 1), BS_OK);
  CHECK_STATUS(bs_engine_add_object(e, kTrain, sizeof kTrain - 1), BS_ALREADY_EXISTS);
  CHECK(strstr(bs_last_error(), "Workload \"default/train\"") != NULL);
  CHECK_STATUS(bs_engine_update_object(e, kTrain, sizeof kTrain - 1), BS_OK);
  CHECK_STATUS(bs_engine_update_object(e, kBig, sizeof kBig - 1), BS_NOT_FOUND);
  CHECK_STATUS(bs_engine_add_object(e, kBig, sizeof kBig - 1), BS_OK);

  /* Windows of pods: 4 changes no result below (0, auto, is the default). */
  CHECK_STATUS(bs_engine_set_window(NULL, 4), BS_INVALID_ARGUMENT);
  CHECK_STATUS(bs_engine_set_window(e, 0), BS_OK);
  CHECK_STATUS(bs_engine_set_window(e, 4), BS_OK);

  /* Admitted: the workers together (queue order), the ordinary pod in its
   * place; results in the list's order. */
  CHECK_STATUS(bs_engine_schedule_all(e, kTrainPods, sizeof kTrainPods - 1, &rs), BS_OK);
  if (rs) {
    CHECK(rs->count == 3);
    if (rs->count == 3) {
      const char* pods[] = {"default/w1", "default/x1", "default/w2"};
      for (size_t i = 0; i < 3; ++i) {
        const bs_schedule_result* r = rs->results[i];
        CHECK(strcmp(r->pod, pods[i]) == 0);
        CHECK(r->code == 0 && strcmp(r->node, "n1") == 0);
        CHECK(strcmp(r->pod_group, i == 1 ? "" : "default/train/workers") == 0);
        CHECK(strcmp(r->group_outcome, i == 1 ? "" : "admitted") == 0);
        CHECK(strcmp(r->group_domain, "") == 0); /* no topology annotation */
      }
      CHECK(strstr(rs->results[0]->json, "\"podGroup\":\"default/train/workers\",\"group\":\"admitted\"") != NULL);
    }
    bs_schedule_results_free(rs);
  }
  bs_schedule_results_free(NULL);

  /* Rejected: one cpu left for a gang of three; nothing of it stays. */
  char* status = NULL;
  CHECK_STATUS(bs_engine_pod_group_status(e, kB1, sizeof kB1 - 1, kBigPods, sizeof kBigPods - 1, &status), BS_OK);
  if (status) {
    CHECK(strcmp(status,
                 "{\"name\":\"default/big\",\"api\":\"PodGroup (scheduling.x-k8s.io/v1alpha1)\","
                 "\"minField\":\"minMember\",\"min\":3,\"placed\":0,\"pending\":3,\"rejection\":null}") == 0);
    bs_free(status);
  }
  CHECK_STATUS(bs_engine_schedule_all(e, kBigPods, sizeof kBigPods - 1, &rs), BS_OK);
  if (rs) {
    CHECK(rs->count == 3);
    for (size_t i = 0; i < rs->count; ++i) {
      const bs_schedule_result* r = rs->results[i];
      CHECK(r->code == 2 && r->node[0] == '\0');
      CHECK(strcmp(r->pod_group, "default/big") == 0);
      CHECK(strcmp(r->group_outcome, "rejected") == 0);
      static const char kWhy[] = "pod group \"default/big\" rejected: 1/3 members placed";
      CHECK(strncmp(r->message, kWhy, sizeof kWhy - 1) == 0);
    }
    bs_schedule_results_free(rs);
  }
  int assumed = 1;
  CHECK_STATUS(bs_engine_is_assumed_pod(e, "u-b1", &assumed), BS_OK);
  CHECK(assumed == 0);
  CHECK_STATUS(bs_engine_is_assumed_pod(e, "u-w1", &assumed), BS_OK);
  CHECK(assumed == 1);

  /* Removed: a plain "PodGroup" is ambiguous; the Workload's later members
   * are rejected as missing, the pods placed keep their places. */
  CHECK_STATUS(bs_engine_remove_object(e, "PodGroup", "default", "big"), BS_INVALID_ARGUMENT);
  CHECK_STATUS(bs_engine_remove_object(e, "PodGroup.scheduling.k8s.io", "default", "big"), BS_NOT_FOUND);
  CHECK_STATUS(bs_engine_remove_object(e, "PodGroup.scheduling.x-k8s.io", "default", "big"), BS_OK);
  CHECK_STATUS(bs_engine_remove_object(e, "Workload", "default", "train"), BS_OK);
  CHECK_STATUS(bs_engine_remove_object(e, "Workload", "default", "train"), BS_NOT_FOUND);
  CHECK_STATUS(bs_engine_pod_group_status(e, kB1, sizeof kB1 - 1, NULL, 0, &status), BS_OK);
  if (status) {
    CHECK(strstr(status, "\"rejection\":\"pod group \\\"default/big\\\" rejected: PodGroup not found\"") != NULL);
    bs_free(status);
  }
  CHECK_STATUS(bs_engine_pod_group_status(e, kSmall, sizeof kSmall - 1, NULL, 0, &status), BS_OK);
  if (status) {
    CHECK(strcmp(status, "null") == 0);
    bs_free(status);
  }
  CHECK_STATUS(bs_engine_schedule_all(e, kLatePods, sizeof kLatePods - 1, &rs), BS_OK);
  if (rs) {
    CHECK(rs->count == 1);
    if (rs->count == 1) {
      CHECK(rs->results[0]->code == 3);
      CHECK(strcmp(rs->results[0]->group_outcome, "rejected") == 0);
      CHECK(strstr(rs->results[0]->message, "waiting for pods's workload \"train\"") != NULL);
    }
    bs_schedule_results_free(rs);
  }
  CHECK_STATUS(bs_engine_is_assumed_pod(e, "u-w2", &assumed), BS_OK);
  CHECK(assumed == 1);
  bs_engine_destroy(e);
}

int main(void) {
  CHECK(strcmp(bs_version(), BULKSCORE_VERSION) == 0);
  CHECK(bs_abi_version() == BULKSCORE_ABI_VERSION);

  /* Careless calls: statuses, never a crash. */
  bs_engine* engine = NULL;
  CHECK_STATUS(bs_engine_create(NULL, 0, NULL, NULL), BS_INVALID_ARGUMENT);
  CHECK_STATUS(bs_engine_create("profiles: [", 11, NULL, &engine), BS_INVALID_INPUT);
  CHECK(engine == NULL);
  CHECK(strlen(bs_last_error()) > 0);
  CHECK_STATUS(bs_engine_add_node(NULL, kNode3, sizeof kNode3 - 1), BS_INVALID_ARGUMENT);
  bs_engine_options options;
  bs_engine_options_init(&options);
  options.batching = 7;
  CHECK_STATUS(bs_engine_create(NULL, 0, &options, &engine), BS_INVALID_ARGUMENT);
  options.batching = BS_BATCHING_EXACT;
  options.backend = "tpu";
  CHECK_STATUS(bs_engine_create(NULL, 0, &options, &engine), BS_INVALID_INPUT);

  options.backend = "cpu";
  options.tie_break = BS_TIE_BREAK_FIRST;
  CHECK_STATUS(bs_engine_create(NULL, 0, &options, &engine), BS_OK);
  if (!engine) return 1;
  CHECK(strcmp(bs_engine_backend(engine), "cpu") == 0);
  CHECK_STATUS(bs_engine_load(engine, kNodes, sizeof kNodes - 1, kPods, sizeof kPods - 1, NULL, 0), BS_OK);
  CHECK_STATUS(bs_engine_load(engine, "{", 1, kPods, sizeof kPods - 1, NULL, 0), BS_INVALID_INPUT);
  /* A failed load changes nothing. */

  /* Rank before: n2 has more room. */
  bs_ranking* ranking = NULL;
  CHECK_STATUS(bs_engine_rank(engine, kWeb, sizeof kWeb - 1, 5, &ranking), BS_OK);
  if (ranking) {
    CHECK(ranking->num_nodes == 2);
    CHECK(ranking->feasible_nodes == 2);
    CHECK(strcmp(ranking->chosen, "n2") == 0);
    CHECK(strcmp(ranking->nodes[0].node, "n2") == 0);
    CHECK(ranking->num_plugins > 0);
    int64_t sum = 0;
    for (size_t i = 0; i < ranking->num_plugins; ++i) sum += ranking->nodes[0].weighted[i];
    CHECK(sum == ranking->nodes[0].total);
    CHECK(strstr(ranking->json, "\"chosen\":\"n2\"") != NULL);
    bs_ranking_free(ranking);
  }

  /* schedule assumes; the same pod again is refused. */
  bs_schedule_result* r = NULL;
  CHECK_STATUS(bs_engine_schedule(engine, kWeb, sizeof kWeb - 1, &r), BS_OK);
  if (r) {
    CHECK(r->code == 0);
    CHECK(strcmp(r->node, "n2") == 0);
    CHECK(r->feasible_nodes == 2);
    CHECK(strncmp(r->json, "{\"pod\":\"default/web\",\"node\":\"n2\",\"score\":", 40) == 0);
    bs_schedule_result_free(r);
  }
  int assumed = 0;
  CHECK_STATUS(bs_engine_is_assumed_pod(engine, "u-web", &assumed), BS_OK);
  CHECK(assumed == 1);
  CHECK_STATUS(bs_engine_schedule(engine, kWeb, sizeof kWeb - 1, &r), BS_OK);
  if (r) {
    CHECK(r->code == 1);
    CHECK(strstr(r->message, "in the cache already") != NULL);
    bs_schedule_result_free(r);
  }
  CHECK_STATUS(bs_engine_update_pod(engine, kWebBound, sizeof kWebBound - 1), BS_WRONG_STATE);
  CHECK_STATUS(bs_engine_finish_binding(engine, "u-web"), BS_OK);
  CHECK_STATUS(bs_engine_add_pod(engine, kWebBound, sizeof kWebBound - 1), BS_OK); /* confirmed */
  CHECK_STATUS(bs_engine_is_assumed_pod(engine, "u-web", &assumed), BS_OK);
  CHECK(assumed == 0);
  CHECK_STATUS(bs_engine_add_pod(engine, kWebBound, sizeof kWebBound - 1), BS_ALREADY_EXISTS);
  CHECK(strstr(bs_last_error(), "already in added state") != NULL);
  CHECK_STATUS(bs_engine_forget_pod(engine, "u-web"), BS_WRONG_STATE);
  CHECK_STATUS(bs_engine_remove_pod(engine, "u-nope"), BS_NOT_FOUND);
  CHECK_STATUS(bs_engine_add_pod(engine, kWeb, sizeof kWeb - 1), BS_INVALID_INPUT); /* no nodeName */

  /* Unschedulable: upstream's FitError text. */
  CHECK_STATUS(bs_engine_schedule(engine, kHuge, sizeof kHuge - 1, &r), BS_OK);
  if (r) {
    CHECK(r->code == 2);
    CHECK(strcmp(r->code_name, "Unschedulable") == 0);
    CHECK(strcmp(r->message,
                 "0/2 nodes are available: 2 Insufficient cpu. no new claims to deallocate, preemption: 0/2 nodes "
                 "are available: 2 Preemption is not helpful for scheduling.") == 0);
    CHECK(r->node[0] == '\0');
    bs_schedule_result_free(r);
  }
  CHECK_STATUS(bs_engine_peek(engine, "not json", 8, &r), BS_INVALID_INPUT);
  CHECK(r == NULL);

  /* Nodes and objects. */
  CHECK_STATUS(bs_engine_add_node(engine, kNode3, sizeof kNode3 - 1), BS_OK);
  CHECK_STATUS(bs_engine_add_node(engine, kNode3, sizeof kNode3 - 1), BS_ALREADY_EXISTS);
  CHECK_STATUS(bs_engine_peek(engine, kHuge, sizeof kHuge - 1, &r), BS_OK);
  if (r) {
    CHECK(strcmp(r->message, "0/3 nodes are available: 3 Insufficient cpu.") == 0);
    bs_schedule_result_free(r);
  }
  CHECK_STATUS(bs_engine_remove_node(engine, "n3"), BS_OK);
  CHECK_STATUS(bs_engine_remove_node(engine, "n3"), BS_NOT_FOUND);
  CHECK_STATUS(bs_engine_add_object(engine, kService, sizeof kService - 1), BS_OK);
  CHECK_STATUS(bs_engine_add_object(engine, kService, sizeof kService - 1), BS_ALREADY_EXISTS);
  CHECK_STATUS(bs_engine_update_object(engine, kService, sizeof kService - 1), BS_OK);
  CHECK_STATUS(bs_engine_add_object(engine, kNode3, sizeof kNode3 - 1), BS_INVALID_INPUT);
  CHECK_STATUS(bs_engine_remove_object(engine, "Service", "default", "web"), BS_OK);
  CHECK_STATUS(bs_engine_remove_object(engine, "Service", "default", "web"), BS_NOT_FOUND);
  CHECK_STATUS(bs_engine_remove_object(engine, "Gadget", "default", "web"), BS_INVALID_ARGUMENT);
  CHECK_STATUS(bs_engine_remove_pod(engine, "u-web"), BS_OK);

  /* Warnings and metrics, freed with bs_free. */
  char** warnings = NULL;
  size_t count = 99;
  CHECK_STATUS(bs_engine_take_warnings(engine, &warnings, &count), BS_OK);
  if (warnings) {
    size_t n = 0;
    while (warnings[n]) ++n;
    CHECK(n == count);
    bs_free(warnings);
  }
  /* An unschedulable pod counts as pending (once, attempted twice) until the
   * informer's delete of the pending pod (bs_engine_remove_pending_pod). */
  CHECK_STATUS(bs_engine_schedule(engine, kHuge, sizeof kHuge - 1, &r), BS_OK);
  if (r) {
    CHECK(r->code == 2);
    bs_schedule_result_free(r);
  }
  char* metrics = NULL;
  CHECK_STATUS(bs_engine_metrics_text(engine, &metrics), BS_OK);
  if (metrics) {
    CHECK(strstr(metrics, "# TYPE scheduler_schedule_attempts_total counter") != NULL);
    CHECK(strstr(metrics, "scheduler_pending_pods{queue=\"unschedulable\"} 1\n") != NULL);
    CHECK(strstr(metrics,
                 "scheduler_unschedulable_pods{plugin=\"NodeResourcesFit\",profile=\"default-scheduler\"} 1\n") !=
          NULL);
    CHECK(strstr(metrics, "# TYPE scheduler_batch_attempts_total counter") != NULL);
    bs_free(metrics);
  }
  CHECK_STATUS(bs_engine_remove_pending_pod(engine, "u-huge"), BS_OK);
  CHECK_STATUS(bs_engine_remove_pending_pod(engine, "u-huge"), BS_NOT_FOUND);
  CHECK_STATUS(bs_engine_remove_pending_pod(engine, NULL), BS_INVALID_ARGUMENT);
  CHECK_STATUS(bs_engine_metrics_text(engine, &metrics), BS_OK);
  if (metrics) {
    CHECK(strstr(metrics, "scheduler_pending_pods{queue=\"unschedulable\"} 0\n") != NULL);
    bs_free(metrics);
  }
  bs_engine_destroy(engine);
  bs_engine_destroy(NULL);

  /* Two engines on one shared executor, the handle destroyed first. */
  bs_executor* pool = NULL;
  CHECK_STATUS(bs_executor_create(2, &pool), BS_OK);
  bs_engine_options_init(&options);
  options.backend = "cpu";
  options.executor = pool;
  bs_engine *a = NULL, *b = NULL;
  CHECK_STATUS(bs_engine_create(NULL, 0, &options, &a), BS_OK);
  CHECK_STATUS(bs_engine_create(NULL, 0, &options, &b), BS_OK);
  bs_executor_destroy(pool);
  if (a && b) {
    CHECK_STATUS(bs_engine_load(a, kNodes, sizeof kNodes - 1, kPods, sizeof kPods - 1, NULL, 0), BS_OK);
    CHECK_STATUS(bs_engine_load(b, kNodes, sizeof kNodes - 1, kPods, sizeof kPods - 1, NULL, 0), BS_OK);
    bs_schedule_result *ra = NULL, *rb = NULL;
    CHECK_STATUS(bs_engine_schedule(a, kWeb, sizeof kWeb - 1, &ra), BS_OK);
    CHECK_STATUS(bs_engine_schedule(b, kWeb, sizeof kWeb - 1, &rb), BS_OK);
    if (ra && rb) CHECK(strcmp(ra->json, rb->json) == 0);
    bs_schedule_result_free(ra);
    bs_schedule_result_free(rb);
  }
  bs_engine_destroy(a);
  bs_engine_destroy(b);
  bs_schedule_result_free(NULL);
  bs_ranking_free(NULL);

  node_data_calls();
  preemption_calls();
  gang_calls();

  if (failures) {
    fprintf(stderr, "test_capi: %d check(s) failed\n", failures);
    return 1;
  }
  printf("test_capi: all checks passed\n");
  return 0;
}
