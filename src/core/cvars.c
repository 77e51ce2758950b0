#include "cvars.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NAME_LEN 256
#define STRING_VALUE_LEN 1024

/* The types MPI_T gives control variables, by the names the meta record uses. */
static const struct {
    MPI_Datatype type;
    const char *name;
} type_names[] = {
    {MPI_INT, "int"},
    {MPI_UNSIGNED, "unsigned"},
    {MPI_UNSIGNED_LONG, "unsigned long"},
    {MPI_UNSIGNED_LONG_LONG, "unsigned long long"},
    {MPI_COUNT, "count"},
    {MPI_DOUBLE, "double"},
    {MPI_CHAR, "char"},
    {MPI_C_BOOL, "bool"},
    {MPI_LONG_LONG, "long long"},
};

static const char *type_name(MPI_Datatype type)
{
    for (size_t i = 0; i < sizeof type_names / sizeof type_names[0]; i++)
        if (type_names[i].type == type)
            return type_names[i].name;
    return "other";
}

/* MPI_T's scopes and their names, in the standard's order. */
static const int scopes[] = {MPI_T_SCOPE_CONSTANT, MPI_T_SCOPE_READONLY, MPI_T_SCOPE_LOCAL, MPI_T_SCOPE_GROUP,
                             MPI_T_SCOPE_GROUP_EQ, MPI_T_SCOPE_ALL,      MPI_T_SCOPE_ALL_EQ};
static const char *const scope_texts[] = {"constant", "readonly", "local", "group", "group_eq", "all", "all_eq"};

static const char *scope_name(int scope)
{
    for (size_t i = 0; i < sizeof scopes / sizeof scopes[0]; i++)
        if (scopes[i] == scope)
            return scope_texts[i];
    return "other";
}

/* Whether the environment sets the variable: MPICH reads MPIR_CVAR_X (or MPICH_X), Open MPI
 * OMPI_MCA_x for its parameter x. */
static int set_by_environment(const char *name)
{
    char alias[NAME_LEN + 16];
    if (getenv(name))
        return 1;
    snprintf(alias, sizeof alias, "OMPI_MCA_%s", name);
    if (getenv(alias))
        return 1;
    if (strncmp(name, "MPIR_CVAR_", 10) == 0) {
        snprintf(alias, sizeof alias, "MPICH_%s", name + 10);
        return getenv(alias) != NULL;
    }
    return 0;
}

/* The value of one variable under key, or null when it cannot be read without an object. */
static void write_value(ml_json_t *out, const char *key, int index, MPI_Datatype type)
{
    MPI_T_cvar_handle handle;
    int count;
    if (MPI_T_cvar_handle_alloc(index, NULL, &handle, &count) != MPI_SUCCESS) {
        ml_json_null(out, key);
        return;
    }
    union {
        int i;
        unsigned u;
        unsigned long ul;
        unsigned long long ull;
        long long ll;
        _Bool b;
        MPI_Count c;
        double d;
    } v;
    int rc = MPI_ERR_OTHER;
    if (type == MPI_CHAR && count > 0 && count <= STRING_VALUE_LEN) {
        char text[STRING_VALUE_LEN + 1] = {0};
        if (MPI_T_cvar_read(handle, text) == MPI_SUCCESS) {
            ml_json_string(out, key, text);
            rc = MPI_SUCCESS;
        }
    } else if (count == 1 && strcmp(type_name(type), "other") != 0 && type != MPI_CHAR &&
               MPI_T_cvar_read(handle, &v) == MPI_SUCCESS) {
        rc = MPI_SUCCESS;
        if (type == MPI_INT)
            ml_json_int(out, key, v.i);
        else if (type == MPI_UNSIGNED)
            ml_json_int(out, key, v.u);
        else if (type == MPI_UNSIGNED_LONG)
            ml_json_int(out, key, (int64_t)v.ul);
        else if (type == MPI_UNSIGNED_LONG_LONG)
            ml_json_int(out, key, (int64_t)v.ull);
        else if (type == MPI_LONG_LONG)
            ml_json_int(out, key, v.ll);
        else if (type == MPI_C_BOOL)
            ml_json_bool(out, key, v.b);
        else if (type == MPI_COUNT)
            ml_json_int(out, key, (int64_t)v.c);
        else
            ml_json_double(out, key, v.d);
    }
    if (rc != MPI_SUCCESS)
        ml_json_null(out, key);
    MPI_T_cvar_handle_free(&handle);
}

static void write_cvar(ml_json_t *out, int index)
{
    char name[NAME_LEN];
    int name_len = NAME_LEN, desc_len = 0, verbosity, bind, scope;
    MPI_Datatype type;
    MPI_T_enum enumtype;
    if (MPI_T_cvar_get_info(index, name, &name_len, &verbosity, &type, &enumtype, NULL, &desc_len, &bind, &scope) !=
            MPI_SUCCESS ||
        name[0] == '\0')
        return;
    ml_json_begin_object(out, name);
    ml_json_string(out, "type", type_name(type));
    ml_json_string(out, "scope", scope_name(scope));
    if (bind == MPI_T_BIND_NO_OBJECT) {
        write_value(out, "value", index, type);
        if (set_by_environment(name))
            ml_json_null(out, "default");
        else
            write_value(out, "default", index, type);
    } else {
        ml_json_null(out, "value");
        ml_json_null(out, "default");
    }
    ml_json_end_object(out);
}

void ml_cvars_json(ml_json_t *out, const char *key)
{
    int provided, count;
    if (MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) != MPI_SUCCESS) {
        ml_json_null(out, key);
        return;
    }
    if (MPI_T_cvar_get_num(&count) != MPI_SUCCESS)
        count = 0;
    ml_json_begin_object(out, key);
    ml_json_int(out, "count", count);
    ml_json_begin_object(out, "vars");
    for (int i = 0; i < count; i++)
        write_cvar(out, i);
    ml_json_end_object(out);
    ml_json_end_object(out);
    MPI_T_finalize();
}
