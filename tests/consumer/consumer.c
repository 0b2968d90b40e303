/* An embedder's C program against the installed libbulkscore.so. */
#include <bulkscore/bulkscore.h>
#include <stdio.h>
#include <string.h>

int main(void) {
  static const char nodes[] =
      "{\"kind\":\"NodeList\",\"items\":[{\"kind\":\"Node\",\"metadata\":{\"name\":\"n1\"},"
      "\"status\":{\"allocatable\":{\"cpu\":\"4\",\"memory\":\"8Gi\",\"pods\":\"110\"}}}]}";
  static const char pods[] = "{\"kind\":\"PodList\",\"items\":[]}";
  static const char pod[] =
      "{\"metadata\":{\"name\":\"web\",\"namespace\":\"default\",\"uid\":\"u1\"},"
      "\"spec\":{\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":{\"cpu\":\"1\"}}}]}}";
  if (bs_abi_version() != BULKSCORE_ABI_VERSION) return 1;
  bs_engine_options options;
  bs_engine_options_init(&options);
  options.backend = "cpu";
  bs_engine* engine = NULL;
  if (bs_engine_create(NULL, 0, &options, &engine) != BS_OK ||
      bs_engine_load(engine, nodes, sizeof nodes - 1, pods, sizeof pods - 1, NULL, 0) != BS_OK) {
    fprintf(stderr, "consumer_c: %s\n", bs_last_error());
    return 1;
  }
  bs_schedule_result* r = NULL;
  if (bs_engine_schedule(engine, pod, sizeof pod - 1, &r) != BS_OK) {
    fprintf(stderr, "consumer_c: %s\n", bs_last_error());
    return 1;
  }
  const int ok = strcmp(r->node, "n1") == 0;
  printf("%s\n", r->json);
  bs_schedule_result_free(r);
  bs_engine_destroy(engine);
  return ok ? 0 : 1;
}
