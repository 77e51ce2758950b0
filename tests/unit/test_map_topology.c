/* Topologies against known shapes: synthetic descriptions and every way they can be wrong, their
 * text round trip, lowest common ancestors, joins, description files, hwloc XML exports of known
 * trees (cgroup-like restrictions included, tests/data/map/hw_*.xml made with lstopo -i), and
 * this machine compared with hwloc itself. Also the names of status codes and algorithms, and the
 * status convention: outputs written only on success.
 * argv[1]: tests/data/map. */
#include <hwloc.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mapunit.h"

/* The description text of a topology ("?" when describe fails). */
static const char *describe(const mpilens_map_topology_t *t)
{
    static char text[512];
    if (mpilens_map_topology_describe(t, text, sizeof text) != MPILENS_MAP_OK)
        strcpy(text, "?");
    return text;
}

/* The description of what `spec` parses into ("?" when it does not). */
static const char *round_trip(const char *spec)
{
    mpilens_map_topology_t *t;
    if (mpilens_map_topology_synthetic(spec, &t) != MPILENS_MAP_OK)
        return "?";
    const char *text = describe(t);
    mpilens_map_topology_free(t);
    return text;
}

static int spec_status(const char *spec)
{
    mpilens_map_topology_t *t = (mpilens_map_topology_t *)&t; /* a failed call must not touch it */
    int status = mpilens_map_topology_synthetic(spec, &t);
    if (status == MPILENS_MAP_OK)
        mpilens_map_topology_free(t);
    else
        CHECK(t == (mpilens_map_topology_t *)&t);
    return status;
}

static void check_place(const mpilens_map_topology_t *t, long slot, const char *host, int core, int pu)
{
    const char *h = NULL;
    int c = -1, p = -1;
    CHECK(mpilens_map_topology_slot_place(t, slot, &h, &c, &p) == MPILENS_MAP_OK);
    CHECK_STR(h, host);
    CHECK(c == core);
    CHECK(p == pu);
}

static void test_synthetic(void)
{
    mpilens_map_topology_t *t;
    CHECK(mpilens_map_topology_synthetic("node:4 package:2 core:12", &t) == MPILENS_MAP_OK);
    int depth, arity;
    long slots;
    double cost;
    const char *name;
    CHECK(mpilens_map_topology_depth(t, &depth) == MPILENS_MAP_OK && depth == 3);
    CHECK(mpilens_map_topology_slots(t, &slots) == MPILENS_MAP_OK && slots == 96);
    CHECK(mpilens_map_topology_arity(t, 0, &arity) == MPILENS_MAP_OK && arity == 4);
    CHECK(mpilens_map_topology_arity(t, 2, &arity) == MPILENS_MAP_OK && arity == 12);
    CHECK(mpilens_map_topology_level_name(t, 1, &name) == MPILENS_MAP_OK);
    CHECK_STR(name, "package");
    CHECK(mpilens_map_topology_cost(t, 0, &cost) == MPILENS_MAP_OK && cost == 100);
    CHECK(mpilens_map_topology_cost(t, 1, &cost) == MPILENS_MAP_OK && cost == 10);
    CHECK(mpilens_map_topology_cost(t, 2, &cost) == MPILENS_MAP_OK && cost == 1);
    CHECK(t->below[0] == 96 && t->below[1] == 24 && t->below[2] == 12 && t->below[3] == 1);
    CHECK(t->hosts && strcmp(t->hosts[3], "node3") == 0 && !t->core && !t->pu);
    CHECK(mpilens_map_topology_arity(t, 3, &arity) == MPILENS_MAP_ERR_ARG);
    CHECK(mpilens_map_topology_arity(t, -1, &arity) == MPILENS_MAP_ERR_ARG);
    CHECK(mpilens_map_topology_level_name(t, 3, &name) == MPILENS_MAP_ERR_ARG);
    CHECK(mpilens_map_topology_cost(t, 3, &cost) == MPILENS_MAP_ERR_ARG);
    CHECK(mpilens_map_topology_depth(NULL, &depth) == MPILENS_MAP_ERR_ARG);
    CHECK(mpilens_map_topology_slots(t, NULL) == MPILENS_MAP_ERR_ARG);
    mpilens_map_topology_free(t);

    /* Accepted: any blank between words, arity 1, the deepest tree, long names, 2^31-1 slots. */
    CHECK_STR(round_trip("\t a_1:2\n\n b-2:3  cost=5,5 "), "a_1:2 b-2:3 cost=5,5");
    CHECK_STR(round_trip("x:1"), "x:1 cost=1");
    CHECK_STR(round_trip("a:1 b:1 c:1 d:1 e:1 f:1 g:1 h:2"),
              "a:1 b:1 c:1 d:1 e:1 f:1 g:1 h:2 cost=10000000,1000000,100000,10000,1000,100,10,1");
    CHECK_STR(round_trip("abcdefghijklmno:2"), "abcdefghijklmno:2 cost=1");
    CHECK_STR(round_trip("pu:2147483647"), "pu:2147483647 cost=1");
    CHECK_STR(round_trip("a:2 b:2 cost=0,0"), "a:2 b:2 cost=0,0");

    static const char *const bad[] = {
        "",
        "   \n",
        "core",
        "core:",
        "core:0",
        "core:-1",
        "core:+2",
        "core:x",
        "core:2x",
        ":2",
        "co re:2",
        "a.b:2",
        "abcdefghijklmnop:2",
        "a:1 b:1 c:1 d:1 e:1 f:1 g:1 h:1 i:1",
        "a:2147483648",
        "a:99999999999999999999",
        "a:46341 b:46341",
        "node:65536 core:32768",
        "core:2 cost=1,1",
        "a:2 b:2 cost=1",
        "a:2 b:2 cost=1,10",
        "a:2 b:2 cost=10,-1",
        "a:2 cost=nan",
        "a:2 cost=inf",
        "a:2 cost=1 b:2",
        "a:2 cost=1 cost=1",
        "a:2 cost=",
        "a:2 b:2 cost=1,",
        "a:2 b:2 cost=1,,1",
        "a:2 cost=x",
        "cost=1 a:2",
        "cost=1",
        "a:2 # comment",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int status = spec_status(bad[i]);
        if (status != MPILENS_MAP_ERR_SPEC)
            fprintf(stderr, "spec \"%s\" gave %d\n", bad[i], status);
        CHECK(status == MPILENS_MAP_ERR_SPEC);
    }
    CHECK(mpilens_map_topology_synthetic(NULL, &t) == MPILENS_MAP_ERR_ARG);
    CHECK(mpilens_map_topology_synthetic("core:2", NULL) == MPILENS_MAP_ERR_ARG);
}

/* spec -> topology -> text -> topology gives the same levels and costs, bit for bit. */
static void test_describe(void)
{
    static const char *const specs[] = {"node:4 package:2 core:12", "a:3 b:5 cost=0.1,0.05", "x:2 cost=0",
                                        "n:2 s:2 c:2 cost=1e+300,3.14159265358979,1e-300"};
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
        mpilens_map_topology_t *a, *b;
        CHECK(mpilens_map_topology_synthetic(specs[i], &a) == MPILENS_MAP_OK);
        CHECK(mpilens_map_topology_synthetic(describe(a), &b) == MPILENS_MAP_OK);
        CHECK(a->depth == b->depth);
        for (int d = 0; d < a->depth; d++) {
            CHECK(a->arity[d] == b->arity[d]);
            CHECK_STR(a->level_name[d], b->level_name[d]);
            CHECK(a->cost[d] == b->cost[d]);
        }
        mpilens_map_topology_free(a);
        mpilens_map_topology_free(b);
    }
    CHECK_STR(round_trip("node:4 package:2 core:12"), "node:4 package:2 core:12 cost=100,10,1");
    CHECK_STR(round_trip("a:3 b:5 cost=0.1,0.05"), "a:3 b:5 cost=0.1,0.05");

    mpilens_map_topology_t *t;
    CHECK(mpilens_map_topology_synthetic("a:2 b:3", &t) == MPILENS_MAP_OK);
    const char *expected = "a:2 b:3 cost=10,1";
    char text[32];
    memset(text, 'z', sizeof text);
    CHECK(mpilens_map_topology_describe(t, text, strlen(expected)) == MPILENS_MAP_ERR_ARG);
    CHECK(text[0] == 'z'); /* untouched on failure */
    CHECK(mpilens_map_topology_describe(t, text, strlen(expected) + 1) == MPILENS_MAP_OK);
    CHECK_STR(text, expected);
    CHECK(mpilens_map_topology_describe(t, NULL, 32) == MPILENS_MAP_ERR_ARG);
    mpilens_map_topology_free(t);
}

/* The level of the lowest common ancestor of two slots, as the cost model sees it: one byte
 * between processes on a and b lands in bytes_at_level[level + 1] (ml_map_common_level is not
 * exported). */
static int common_level(const mpilens_map_topology_t *t, long a, long b)
{
    mpilens_map_matrix_t *m;
    mpilens_map_cost_t cost;
    long slot_of[2] = {a, b};
    int level = -2;
    if (mpilens_map_matrix_create(2, &m) != MPILENS_MAP_OK)
        return level;
    if (mpilens_map_matrix_add(m, 0, 1, 1.0) == MPILENS_MAP_OK &&
        mpilens_map_cost(t, m, slot_of, &cost) == MPILENS_MAP_OK)
        for (int k = 0; k <= t->depth; k++)
            if (cost.bytes_at_level[k] == 1.0)
                level = k - 1;
    mpilens_map_matrix_free(m);
    return level;
}

static void test_common_level(void)
{
    mpilens_map_topology_t *t;
    CHECK(mpilens_map_topology_synthetic("node:2 package:2 core:2", &t) == MPILENS_MAP_OK);
    /* slots 0-3 on node 0 (0-1 and 2-3 share a package), 4-7 on node 1 */
    static const struct {
        long a, b;
        int level;
    } pairs[] = {
        {0, 0, 2}, {7, 7, 2}, {0, 1, 1},  {3, 2, 1},  {6, 7, 1},  {0, 2, 0},  {1, 3, 0},
        {5, 7, 0}, {4, 6, 0}, {0, 4, -1}, {1, 6, -1}, {3, 4, -1}, {7, 0, -1},
    };
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
        CHECK(common_level(t, pairs[i].a, pairs[i].b) == pairs[i].level);
        CHECK(common_level(t, pairs[i].b, pairs[i].a) == pairs[i].level);
    }
    mpilens_map_topology_free(t);
}

static void test_slot_place(void)
{
    mpilens_map_topology_t *t;
    CHECK(mpilens_map_topology_synthetic("node:2 core:3", &t) == MPILENS_MAP_OK);
    check_place(t, 0, "node0", 0, 0);
    check_place(t, 4, "node1", 1, 1);
    check_place(t, 5, "node1", 2, 2);
    const char *host;
    int core, pu;
    CHECK(mpilens_map_topology_slot_place(t, 6, &host, &core, &pu) == MPILENS_MAP_ERR_ARG);
    CHECK(mpilens_map_topology_slot_place(t, -1, &host, &core, &pu) == MPILENS_MAP_ERR_ARG);
    CHECK(mpilens_map_topology_slot_place(t, 0, NULL, &core, &pu) == MPILENS_MAP_ERR_ARG);
    mpilens_map_topology_free(t);

    /* A first level that is not "node": one machine, slots numbered through it. */
    CHECK(mpilens_map_topology_synthetic("package:2 core:3", &t) == MPILENS_MAP_OK);
    CHECK(t->hosts == NULL);
    check_place(t, 4, "localhost", 4, 4);
    mpilens_map_topology_free(t);
}

static void test_join(void)
{
    mpilens_map_topology_t *node, *t;
    CHECK(mpilens_map_topology_synthetic("package:2 core:2 cost=10,1", &node) == MPILENS_MAP_OK);
    const char *const hosts[] = {"alpha", "beta", "gamma"};
    CHECK(mpilens_map_topology_join(node, 3, hosts, &t) == MPILENS_MAP_OK);
    CHECK_STR(describe(t), "node:3 package:2 core:2 cost=100,10,1");
    CHECK(t->slots == 12 && t->below[1] == 4);
    check_place(t, 5, "beta", 1, 1);
    check_place(t, 11, "gamma", 3, 3);
    CHECK(common_level(t, 3, 4) == -1 && common_level(t, 4, 6) == 0);
    mpilens_map_topology_free(t);

    CHECK(mpilens_map_topology_join(node, 2, NULL, &t) == MPILENS_MAP_OK);
    check_place(t, 7, "node1", 3, 3);
    mpilens_map_topology_free(t);

    /* errors: no nodes, bad host names, too deep, too many slots */
    t = NULL;
    CHECK(mpilens_map_topology_join(node, 0, NULL, &t) == MPILENS_MAP_ERR_ARG);
    CHECK(mpilens_map_topology_join(NULL, 2, NULL, &t) == MPILENS_MAP_ERR_ARG);
    const char *const missing[] = {"a", NULL};
    CHECK(mpilens_map_topology_join(node, 2, missing, &t) == MPILENS_MAP_ERR_ARG);
    char long_name[ML_MAP_HOST_LEN + 1];
    memset(long_name, 'h', ML_MAP_HOST_LEN);
    long_name[ML_MAP_HOST_LEN] = '\0';
    const char *const too_long[] = {"a", long_name};
    CHECK(mpilens_map_topology_join(node, 2, too_long, &t) == MPILENS_MAP_ERR_ARG);
    long_name[ML_MAP_HOST_LEN - 1] = '\0'; /* the longest that fits */
    CHECK(mpilens_map_topology_join(node, 2, too_long, &t) == MPILENS_MAP_OK);
    CHECK(t && strcmp(t->hosts[1], long_name) == 0);
    mpilens_map_topology_free(t);
    mpilens_map_topology_free(node);

    t = NULL;
    CHECK(mpilens_map_topology_synthetic("a:1 b:1 c:1 d:1 e:1 f:1 g:1 h:2", &node) == MPILENS_MAP_OK);
    CHECK(mpilens_map_topology_join(node, 2, NULL, &t) == MPILENS_MAP_ERR_SPEC);
    mpilens_map_topology_free(node);
    CHECK(mpilens_map_topology_synthetic("core:65536", &node) == MPILENS_MAP_OK);
    CHECK(mpilens_map_topology_join(node, 32768, NULL, &t) == MPILENS_MAP_ERR_SPEC);
    CHECK(t == NULL);
    mpilens_map_topology_free(node);

    /* A node that sends nothing anywhere for free still makes the network cost something. */
    CHECK(mpilens_map_topology_synthetic("core:2 cost=0", &node) == MPILENS_MAP_OK);
    CHECK(mpilens_map_topology_join(node, 2, NULL, &t) == MPILENS_MAP_OK);
    CHECK_STR(describe(t), "node:2 core:2 cost=1,0");
    mpilens_map_topology_free(t);
    mpilens_map_topology_free(node);
}

static void test_set_costs(void)
{
    mpilens_map_topology_t *t;
    CHECK(mpilens_map_topology_synthetic("a:2 b:2 c:2", &t) == MPILENS_MAP_OK);
    const double good[] = {7, 7, 0.5};
    CHECK(mpilens_map_topology_set_costs(t, good, 3) == MPILENS_MAP_OK);
    CHECK_STR(describe(t), "a:2 b:2 c:2 cost=7,7,0.5");
    const double increasing[] = {1, 2, 0}, negative[] = {3, 2, -1}, nan_cost[] = {NAN, 1, 1};
    CHECK(mpilens_map_topology_set_costs(t, good, 2) == MPILENS_MAP_ERR_ARG);
    CHECK(mpilens_map_topology_set_costs(t, increasing, 3) == MPILENS_MAP_ERR_ARG);
    CHECK(mpilens_map_topology_set_costs(t, negative, 3) == MPILENS_MAP_ERR_ARG);
    CHECK(mpilens_map_topology_set_costs(t, nan_cost, 3) == MPILENS_MAP_ERR_ARG);
    CHECK(mpilens_map_topology_set_costs(t, NULL, 3) == MPILENS_MAP_ERR_ARG);
    CHECK_STR(describe(t), "a:2 b:2 c:2 cost=7,7,0.5");
    mpilens_map_topology_free(t);
    CHECK(mpilens_map_topology_free(NULL) == MPILENS_MAP_OK);
}

static mpilens_map_topology_t *load(const char *path, int expected_status)
{
    mpilens_map_topology_t *t = NULL;
    int status = mpilens_map_topology_load(path, &t);
    if (status != expected_status)
        fprintf(stderr, "loading %s gave %d (%s), expected %d\n", path, status, mpilens_map_status_string(status),
                expected_status);
    CHECK(status == expected_status);
    return t;
}

static void test_files(void)
{
    mpilens_map_topology_t *t = load(data_path("two_nodes.topo"), MPILENS_MAP_OK);
    CHECK_STR(describe(t), "node:2 package:2 core:4 cost=100,10,1");
    check_place(t, 9, "node1", 1, 1);
    mpilens_map_topology_free(t);

    load(scratch_file("bad.topo", "# only a comment\n"), MPILENS_MAP_ERR_SPEC);
    load(scratch_file("bad2.topo", "node:2\ncore:0\n"), MPILENS_MAP_ERR_SPEC);
    load(scratch_file("bad.xml", "  <?xml version=\"1.0\"?>\n<topology version=\"2.0\"><object"),
         MPILENS_MAP_ERR_HWLOC);
    load(data_path("no such file"), MPILENS_MAP_ERR_IO);
    load(data_dir, MPILENS_MAP_ERR_IO); /* a directory */
    CHECK(mpilens_map_topology_load(NULL, &t) == MPILENS_MAP_ERR_ARG);
}

/* XML exports of trees whose levels are known; the restricted ones had their allowed_cpuset cut
 * down, as a cgroup does, and show the balancing rule of topology.c. */
/* hwloc exports of known trees: the description each gives, its slot count, and the core and PU
 * of some slots (all on "localhost"). */
static const struct {
    const char *file, *description;
    long slots;
    int places;
    struct {
        long slot;
        int core, pu;
    } place[3];
} xml_trees[] = {
    {"hw_pack2_core4_pu2.xml", "package:2 core:4 pu:2 cost=100,10,1", 16, 2, {{5, 2, 5}, {15, 7, 15}}},
    {"hw_pack2_numa2_core2.xml", "package:2 numa:2 core:2 cost=100,10,1", 8, 1, {{6, 6, 6}}},
    /* 5 cores of one package and 3 of the other: the packages go, 8 cores side by side */
    {"hw_allowed_5_3.xml", "core:8 cost=1", 8, 1, {{7, 7, 7}}},
    /* package 0: two L3 of 2 cores; package 1: one L3 of 4 cores (PUs 8-11). Dropping the L3
     * level balances the packages, which stay. */
    {"hw_allowed_l3.xml", "package:2 core:4 cost=10,1", 8, 3, {{2, 2, 4}, {4, 4, 8}, {7, 7, 11}}},
    /* 3 cores with 2 PUs, 1 with 1: cores are dropped, 7 PUs remain */
    {"hw_allowed_smt.xml", "pu:7 cost=1", 7, 2, {{5, 2, 5}, {6, 3, 6}}},
};

static void test_xml(void)
{
    mpilens_map_topology_t *t;
    for (size_t i = 0; i < sizeof xml_trees / sizeof xml_trees[0]; i++) {
        t = load(data_path(xml_trees[i].file), MPILENS_MAP_OK);
        CHECK_STR(describe(t), xml_trees[i].description);
        CHECK(t->slots == xml_trees[i].slots && t->hosts == NULL);
        for (int k = 0; k < xml_trees[i].places; k++)
            check_place(t, xml_trees[i].place[k].slot, "localhost", xml_trees[i].place[k].core,
                        xml_trees[i].place[k].pu);
        mpilens_map_topology_free(t);
    }

    /* A joined XML node keeps each slot's core and PU. */
    mpilens_map_topology_t *node = load(data_path("hw_pack2_core4_pu2.xml"), MPILENS_MAP_OK);
    CHECK(mpilens_map_topology_join(node, 2, NULL, &t) == MPILENS_MAP_OK);
    CHECK_STR(describe(t), "node:2 package:2 core:4 pu:2 cost=1000,100,10,1");
    check_place(t, 16 + 11, "node1", 5, 11);
    mpilens_map_topology_free(t);
    mpilens_map_topology_free(node);
}

static int hwloc_count(hwloc_topology_t topology, hwloc_obj_type_t type)
{
    int depth = hwloc_get_type_depth(topology, type);
    return depth == HWLOC_TYPE_DEPTH_UNKNOWN ? 0 : (int)hwloc_get_nbobjs_by_depth(topology, depth);
}

static void test_this_machine(void)
{
    hwloc_topology_t topology;
    if (hwloc_topology_init(&topology) != 0 || hwloc_topology_load(topology) != 0) {
        CHECK(!"hwloc loads this machine");
        return;
    }
    int pus = hwloc_count(topology, HWLOC_OBJ_PU), cores = hwloc_count(topology, HWLOC_OBJ_CORE);
    hwloc_topology_destroy(topology);

    mpilens_map_topology_t *t;
    CHECK(mpilens_map_topology_hwloc(&t) == MPILENS_MAP_OK);
    fprintf(stderr, "this machine: %s (%d PUs, %d cores)\n", describe(t), pus, cores);
    CHECK(t->slots == pus);
    CHECK(t->hosts == NULL && t->core && t->pu);
    /* levels in the order of the candidates, each at most once; PUs are leaves where cores
     * hold more than one */
    static const char *const order[] = {"package", "numa", "l3", "core", "pu"};
    int next = 0;
    for (int d = 0; d < t->depth; d++) {
        while (next < 5 && strcmp(order[next], t->level_name[d]) != 0)
            next++;
        CHECK(next < 5);
        next++;
    }
    CHECK((strcmp(t->level_name[t->depth - 1], "pu") == 0) == (cores > 0 && cores < pus));
    for (long s = 0; s < t->slots; s++) {
        CHECK(t->core[s] >= 0 && (cores == 0 || t->core[s] < cores));
        for (long r = 0; r < s; r++)
            CHECK(t->pu[r] != t->pu[s]);
    }
    mpilens_map_topology_free(t);
    CHECK(mpilens_map_topology_hwloc(NULL) == MPILENS_MAP_ERR_ARG);
}

static void test_names(void)
{
    CHECK_STR(mpilens_map_status_string(MPILENS_MAP_OK), "success");
    CHECK_STR(mpilens_map_status_string(MPILENS_MAP_ERR_SPEC), "description that does not parse");
    CHECK_STR(mpilens_map_status_string(MPILENS_MAP_ERR_MONITOR), "monitoring session could not give its matrix");
    CHECK_STR(mpilens_map_status_string((mpilens_map_status_t)-1), "unknown status");
    CHECK_STR(mpilens_map_status_string((mpilens_map_status_t)(MPILENS_MAP_ERR_MONITOR + 1)), "unknown status");
    /* every code has a name of its own */
    for (int s = MPILENS_MAP_OK; s <= MPILENS_MAP_ERR_MONITOR; s++) {
        CHECK(strcmp(mpilens_map_status_string((mpilens_map_status_t)s), "unknown status") != 0);
        for (int other = MPILENS_MAP_OK; other < s; other++)
            CHECK(strcmp(mpilens_map_status_string((mpilens_map_status_t)s),
                         mpilens_map_status_string((mpilens_map_status_t)other)) != 0);
    }

    static const struct {
        const char *name, *canonical;
        mpilens_map_algo_t algo;
    } algos[] = {
        {"treematch", "treematch", MPILENS_MAP_TREEMATCH}, {"greedy", "greedy", MPILENS_MAP_GREEDY},
        {"scotch", "scotch", MPILENS_MAP_SCOTCH},          {"identity", "identity", MPILENS_MAP_IDENTITY},
        {"packed", "packed", MPILENS_MAP_PACKED},          {"rr", "rr", MPILENS_MAP_ROUND_ROBIN},
        {"round-robin", "rr", MPILENS_MAP_ROUND_ROBIN},    {"random", "random", MPILENS_MAP_RANDOM},
    };
    for (size_t i = 0; i < sizeof algos / sizeof algos[0]; i++) {
        mpilens_map_algo_t algo = (mpilens_map_algo_t)-1;
        int available = -1;
        CHECK(mpilens_map_algo_parse(algos[i].name, &algo) == MPILENS_MAP_OK && algo == algos[i].algo);
        const char *name = NULL;
        CHECK(mpilens_map_algo_name(algo, &name) == MPILENS_MAP_OK);
        CHECK_STR(name, algos[i].canonical);
        CHECK(mpilens_map_algo_available(algo, &available) == MPILENS_MAP_OK);
        /* scotch depends on the build, every other algorithm is always there */
        CHECK(algo == MPILENS_MAP_SCOTCH ? available == 0 || available == 1 : available == 1);
    }
    mpilens_map_algo_t algo = MPILENS_MAP_GREEDY;
    CHECK(mpilens_map_algo_parse("TreeMatch", &algo) == MPILENS_MAP_ERR_SPEC);
    CHECK(mpilens_map_algo_parse("", &algo) == MPILENS_MAP_ERR_SPEC);
    CHECK(mpilens_map_algo_parse(NULL, &algo) == MPILENS_MAP_ERR_ARG);
    CHECK(algo == MPILENS_MAP_GREEDY);
    int available;
    CHECK(mpilens_map_algo_available((mpilens_map_algo_t)99, &available) == MPILENS_MAP_ERR_ARG);
    CHECK(mpilens_map_algo_available(MPILENS_MAP_TREEMATCH, NULL) == MPILENS_MAP_ERR_ARG);
    const char *name = "untouched";
    CHECK(mpilens_map_algo_name((mpilens_map_algo_t)99, &name) == MPILENS_MAP_ERR_ARG);
    CHECK(mpilens_map_algo_name((mpilens_map_algo_t)-1, &name) == MPILENS_MAP_ERR_ARG);
    CHECK_STR(name, "untouched");
    CHECK(mpilens_map_algo_name(MPILENS_MAP_GREEDY, NULL) == MPILENS_MAP_ERR_ARG);
}

/* The status convention (include/mpilens/map.h): a call that fails returns the error and leaves
 * every output as it was. Each output starts as a sentinel the call would never write. */
static void test_outputs_only_on_success(void)
{
    mpilens_map_topology_t *t = NULL, *sentinel_topology = (mpilens_map_topology_t *)&t;
    CHECK(mpilens_map_topology_synthetic("node:2 core:2", &t) == MPILENS_MAP_OK);
    if (!t)
        return;
    mpilens_map_topology_t *topology = sentinel_topology;
    CHECK(mpilens_map_topology_synthetic("core:0", &topology) == MPILENS_MAP_ERR_SPEC);
    CHECK(mpilens_map_topology_synthetic(NULL, &topology) == MPILENS_MAP_ERR_ARG);
    CHECK(mpilens_map_topology_load("/nonexistent/mpilens.topo", &topology) == MPILENS_MAP_ERR_IO);
    CHECK(mpilens_map_topology_join(t, 0, NULL, &topology) == MPILENS_MAP_ERR_ARG);
    CHECK(topology == sentinel_topology);

    int value = -7;
    CHECK(mpilens_map_topology_depth(NULL, &value) == MPILENS_MAP_ERR_ARG);
    CHECK(mpilens_map_topology_arity(t, 2, &value) == MPILENS_MAP_ERR_ARG);
    CHECK(mpilens_map_topology_arity(t, -1, &value) == MPILENS_MAP_ERR_ARG);
    CHECK(value == -7);
    CHECK(mpilens_map_topology_depth(t, NULL) == MPILENS_MAP_ERR_ARG);
    const char *name = "untouched";
    CHECK(mpilens_map_topology_level_name(t, 2, &name) == MPILENS_MAP_ERR_ARG);
    CHECK_STR(name, "untouched");
    double cost = -7.0;
    CHECK(mpilens_map_topology_cost(t, 2, &cost) == MPILENS_MAP_ERR_ARG);
    CHECK(cost == -7.0);
    long slots = -7;
    CHECK(mpilens_map_topology_slots(NULL, &slots) == MPILENS_MAP_ERR_ARG);
    CHECK(slots == -7);
    const char *host = "untouched";
    int core = -7, pu = -7;
    CHECK(mpilens_map_topology_slot_place(t, 4, &host, &core, &pu) == MPILENS_MAP_ERR_ARG);
    CHECK(mpilens_map_topology_slot_place(t, 0, &host, NULL, &pu) == MPILENS_MAP_ERR_ARG);
    CHECK_STR(host, "untouched");
    CHECK(core == -7 && pu == -7);
    char text[4] = "abc";
    CHECK(mpilens_map_topology_describe(t, text, sizeof text) == MPILENS_MAP_ERR_ARG);
    CHECK_STR(text, "abc");
    const double bad_costs[2] = {1.0, 2.0}; /* increasing downwards */
    CHECK(mpilens_map_topology_set_costs(t, bad_costs, 2) == MPILENS_MAP_ERR_ARG);
    CHECK(mpilens_map_topology_cost(t, 1, &cost) == MPILENS_MAP_OK && cost == 1.0);

    mpilens_map_matrix_t *m = NULL, *sentinel_matrix = (mpilens_map_matrix_t *)&m, *matrix = sentinel_matrix;
    CHECK(mpilens_map_matrix_create(0, &matrix) == MPILENS_MAP_ERR_ARG);
    CHECK(mpilens_map_matrix_from_dense(2, NULL, &matrix) == MPILENS_MAP_ERR_ARG);
    CHECK(mpilens_map_matrix_load("/nonexistent/mpilens.csv", &matrix) == MPILENS_MAP_ERR_IO);
    CHECK(matrix == sentinel_matrix);
    CHECK(mpilens_map_matrix_create(4, &m) == MPILENS_MAP_OK);
    if (!m) {
        mpilens_map_topology_free(t);
        return;
    }
    CHECK(mpilens_map_matrix_add(m, 0, 1, 100.0) == MPILENS_MAP_OK);
    CHECK(mpilens_map_matrix_add(m, 0, 4, 1.0) == MPILENS_MAP_ERR_ARG);
    CHECK(mpilens_map_matrix_add(m, 0, 1, -1.0) == MPILENS_MAP_ERR_ARG);
    double total = -7.0;
    CHECK(mpilens_map_matrix_total(m, &total) == MPILENS_MAP_OK && total == 100.0);
    total = -7.0;
    CHECK(mpilens_map_matrix_total(NULL, &total) == MPILENS_MAP_ERR_ARG);
    CHECK(total == -7.0);
    value = -7;
    CHECK(mpilens_map_matrix_order(NULL, &value) == MPILENS_MAP_ERR_ARG);
    CHECK(value == -7);
    size_t count = 7;
    const int *from = NULL, *to = NULL;
    const double *bytes = NULL;
    CHECK(mpilens_map_matrix_nonzeros(NULL, &count) == MPILENS_MAP_ERR_ARG);
    CHECK(mpilens_map_matrix_entries(m, &count, &from, NULL, &bytes) == MPILENS_MAP_ERR_ARG);
    CHECK(count == 7 && !from && !to && !bytes);

    long slot_of[4] = {-7, -7, -7, -7};
    CHECK(mpilens_map_compute(t, m, (mpilens_map_algo_t)99, 0, slot_of) == MPILENS_MAP_ERR_ARG);
    const long allowed[4] = {0, 1, 2, 4}; /* slot 4 does not exist */
    CHECK(mpilens_map_compute_onto(t, m, MPILENS_MAP_TREEMATCH, 0, allowed, slot_of) == MPILENS_MAP_ERR_ARG);
    CHECK(slot_of[0] == -7 && slot_of[1] == -7 && slot_of[2] == -7 && slot_of[3] == -7);
    mpilens_map_cost_t before = {.total_bytes = -7.0}, c = before;
    CHECK(mpilens_map_cost(t, m, allowed, &c) == MPILENS_MAP_ERR_ARG);
    CHECK(memcmp(&c, &before, sizeof c) == 0);

    mpilens_map_algo_t algo = MPILENS_MAP_RANDOM;
    CHECK(mpilens_map_algo_parse("none", &algo) == MPILENS_MAP_ERR_SPEC);
    CHECK(algo == MPILENS_MAP_RANDOM);
    int available = -7;
    CHECK(mpilens_map_algo_available((mpilens_map_algo_t)-1, &available) == MPILENS_MAP_ERR_ARG);
    CHECK(available == -7);

    mpilens_map_matrix_free(m);
    mpilens_map_topology_free(t);
}

int main(int argc, char **argv)
{
    if (mapunit_start(argc, argv))
        return 2;
    test_synthetic();
    test_describe();
    test_common_level();
    test_slot_place();
    test_join();
    test_set_costs();
    test_files();
    test_xml();
    test_this_machine();
    test_names();
    test_outputs_only_on_success();
    mapunit_end();
    CHECK_DONE();
}
