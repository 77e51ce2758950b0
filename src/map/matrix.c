/* Communication matrices: directed entries kept as they come, merged and turned into the
 * symmetric graph the algorithms use when asked; and the files they are read from. Every step is
 * linear (counting sorts) so that a 65536-process stencil loads in a fraction of a second. */
#include <ctype.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "map_internal.h"

/* ---- entries ---------------------------------------------------------------------------------- */

#define FIRST_CAPACITY 64

static void drop_graph(mpilens_map_matrix_t *m)
{
    free(m->row_start);
    free(m->column);
    free(m->weight);
    m->row_start = NULL;
    m->column = NULL;
    m->weight = NULL;
}

/* Room for one more entry, doubling: entries arrive one at a time, by the hundred thousand. */
static int reserve_one(mpilens_map_matrix_t *m)
{
    if (m->count < m->capacity)
        return MPILENS_MAP_OK;
    size_t capacity = m->capacity ? 2 * m->capacity : FIRST_CAPACITY;
    if (capacity > SIZE_MAX / sizeof(double))
        return MPILENS_MAP_ERR_NOMEM;
    int *from = realloc(m->from, capacity * sizeof *from);
    if (from)
        m->from = from;
    int *to = from ? realloc(m->to, capacity * sizeof *to) : NULL;
    if (to)
        m->to = to;
    double *bytes = to ? realloc(m->bytes, capacity * sizeof *bytes) : NULL;
    if (!bytes)
        return MPILENS_MAP_ERR_NOMEM;
    m->bytes = bytes;
    m->capacity = capacity;
    return MPILENS_MAP_OK;
}

/* An entry whose indices the caller has checked; nothing sent is nothing to keep. */
static int append(mpilens_map_matrix_t *m, int from, int to, double bytes)
{
    if (bytes == 0)
        return MPILENS_MAP_OK;
    int status = reserve_one(m);
    if (status != MPILENS_MAP_OK)
        return status;
    m->from[m->count] = from;
    m->to[m->count] = to;
    m->bytes[m->count] = bytes;
    m->count++;
    m->merged = 0;
    drop_graph(m);
    return MPILENS_MAP_OK;
}

mpilens_map_status_t mpilens_map_matrix_free(mpilens_map_matrix_t *matrix)
{
    if (matrix) {
        free(matrix->from);
        free(matrix->to);
        free(matrix->bytes);
        drop_graph(matrix);
        free(matrix);
    }
    return MPILENS_MAP_OK;
}

mpilens_map_status_t mpilens_map_matrix_create(int order, mpilens_map_matrix_t **matrix)
{
    if (order < 1 || !matrix)
        return MPILENS_MAP_ERR_ARG;
    mpilens_map_matrix_t *m = calloc(1, sizeof *m);
    if (!m)
        return MPILENS_MAP_ERR_NOMEM;
    m->order = order;
    m->merged = 1;
    *matrix = m;
    return MPILENS_MAP_OK;
}

mpilens_map_status_t mpilens_map_matrix_add(mpilens_map_matrix_t *matrix, int from, int to, double bytes)
{
    if (!matrix || from < 0 || from >= matrix->order || to < 0 || to >= matrix->order || !(bytes >= 0) || isinf(bytes))
        return MPILENS_MAP_ERR_ARG;
    return append(matrix, from, to, bytes);
}

/* Room for exactly `entries` entries in a new matrix (at least one: malloc(0) may say NULL). */
static int allocate_entries(mpilens_map_matrix_t *m, size_t entries)
{
    size_t capacity = entries ? entries : 1;
    m->from = malloc(capacity * sizeof *m->from);
    m->to = malloc(capacity * sizeof *m->to);
    m->bytes = malloc(capacity * sizeof *m->bytes);
    if (!m->from || !m->to || !m->bytes)
        return MPILENS_MAP_ERR_NOMEM;
    m->capacity = capacity;
    return MPILENS_MAP_OK;
}

mpilens_map_status_t mpilens_map_matrix_from_dense(int order, const unsigned long *values,
                                                   mpilens_map_matrix_t **matrix)
{
    if (order < 1 || !values || !matrix)
        return MPILENS_MAP_ERR_ARG;
    size_t cells = (size_t)order * (size_t)order, nonzeros = 0;
    for (size_t c = 0; c < cells; c++)
        nonzeros += values[c] != 0;
    mpilens_map_matrix_t *m;
    int status = mpilens_map_matrix_create(order, &m);
    if (status != MPILENS_MAP_OK)
        return status;
    status = allocate_entries(m, nonzeros);
    if (status != MPILENS_MAP_OK) {
        mpilens_map_matrix_free(m);
        return status;
    }
    /* Row-major, zeros skipped: already sorted and merged. */
    for (size_t c = 0; c < cells; c++) {
        if (values[c] == 0)
            continue;
        m->from[m->count] = (int)(c / (size_t)order);
        m->to[m->count] = (int)(c % (size_t)order);
        m->bytes[m->count] = (double)values[c];
        m->count++;
    }
    *matrix = m;
    return MPILENS_MAP_OK;
}

/* ---- merging and the graph -------------------------------------------------------------------- */

/* One stable counting sort: out = the entries `in` (NULL: 0 .. n-1) ordered by key. */
static void counting_pass(size_t n, const size_t *in, const int *key, int order, size_t *start, size_t *out)
{
    memset(start, 0, ((size_t)order + 1) * sizeof *start);
    for (size_t i = 0; i < n; i++)
        start[key[i] + 1]++;
    for (int k = 0; k < order; k++)
        start[k + 1] += start[k];
    for (size_t i = 0; i < n; i++) {
        size_t e = in ? in[i] : i;
        out[start[key[e]]++] = e;
    }
}

/* The entries in (row, column) order: by column, then stably by row; O(n + order). */
static int sort_pairs(size_t n, const int *row, const int *column, int order, size_t **sorted)
{
    size_t *by_column = malloc((n ? n : 1) * sizeof *by_column);
    size_t *by_pair = malloc((n ? n : 1) * sizeof *by_pair);
    size_t *start = malloc(((size_t)order + 1) * sizeof *start);
    if (!by_column || !by_pair || !start) {
        free(by_column);
        free(by_pair);
        free(start);
        return MPILENS_MAP_ERR_NOMEM;
    }
    counting_pass(n, NULL, column, order, start, by_column);
    counting_pass(n, by_column, row, order, start, by_pair);
    free(by_column);
    free(start);
    *sorted = by_pair;
    return MPILENS_MAP_OK;
}

int ml_map_matrix_merge(mpilens_map_matrix_t *m)
{
    if (m->merged)
        return MPILENS_MAP_OK;
    size_t *sorted;
    int status = sort_pairs(m->count, m->from, m->to, m->order, &sorted);
    if (status != MPILENS_MAP_OK)
        return status;
    mpilens_map_matrix_t merged = {.order = m->order};
    status = allocate_entries(&merged, m->count);
    if (status != MPILENS_MAP_OK) {
        free(merged.from);
        free(merged.to);
        free(merged.bytes);
        free(sorted);
        return status;
    }
    for (size_t i = 0; i < m->count; i++) {
        size_t e = sorted[i], last = merged.count - 1;
        if (merged.count && merged.from[last] == m->from[e] && merged.to[last] == m->to[e]) {
            merged.bytes[last] += m->bytes[e];
        } else {
            merged.from[merged.count] = m->from[e];
            merged.to[merged.count] = m->to[e];
            merged.bytes[merged.count] = m->bytes[e];
            merged.count++;
        }
    }
    free(sorted);
    free(m->from);
    free(m->to);
    free(m->bytes);
    m->from = merged.from;
    m->to = merged.to;
    m->bytes = merged.bytes;
    m->count = merged.count;
    m->capacity = merged.capacity;
    m->merged = 1;
    return MPILENS_MAP_OK;
}

/* Row r of the graph: row r of the merged matrix (its columns ascending) and column r of it (the
 * entries `by_to` lists for r, their rows ascending), merged, the diagonal left out and an entry
 * present both ways added up, from m->column[out] (only counted unless `fill`); the next out. */
static size_t graph_row(mpilens_map_matrix_t *m, int fill, int r, size_t *row, size_t row_end, const size_t *by_to,
                        size_t *col, size_t col_end, size_t out)
{
    while (*row < row_end || *col < col_end) {
        int a = *row < row_end ? m->to[*row] : INT_MAX, b = *col < col_end ? m->from[by_to[*col]] : INT_MAX;
        int c = a < b ? a : b;
        double w = 0;
        if (a == c)
            w += m->bytes[(*row)++];
        if (b == c)
            w += m->bytes[by_to[(*col)++]];
        if (c == r)
            continue;
        if (fill) {
            m->column[out] = c;
            m->weight[out] = w;
        }
        out++;
    }
    return out;
}

/* The symmetric graph of the merged matrix, row by row: a merge of the matrix, in (from, to)
 * order, with its transpose, which one stable counting pass by `to` gives (the matrix and its
 * transpose sorted together took twice the passes over twice the entries). Two sweeps: the first
 * counts each row, the second fills it. */
static int fill_graph(mpilens_map_matrix_t *m)
{
    size_t n = m->count, *by_to = malloc((n ? n : 1) * sizeof *by_to);
    size_t *col_start = malloc(((size_t)m->order + 1) * sizeof *col_start);
    m->row_start = calloc((size_t)m->order + 1, sizeof *m->row_start);
    if (!by_to || !col_start || !m->row_start) {
        free(by_to);
        free(col_start);
        return MPILENS_MAP_ERR_NOMEM;
    }
    counting_pass(n, NULL, m->to, m->order, col_start, by_to);
    int status = MPILENS_MAP_OK;
    for (int sweep = 0; sweep < 2 && status == MPILENS_MAP_OK; sweep++) {
        size_t row = 0, col = 0, out = 0;
        for (int r = 0; r < m->order; r++) {
            size_t row_end = row;
            while (row_end < n && m->from[row_end] == r)
                row_end++;
            /* After counting_pass, col_start[r] is where column r ends. */
            out = graph_row(m, sweep, r, &row, row_end, by_to, &col, col_start[r], out);
            if (sweep == 0)
                m->row_start[r + 1] = out;
        }
        if (sweep == 0) {
            m->column = malloc((out ? out : 1) * sizeof *m->column);
            m->weight = malloc((out ? out : 1) * sizeof *m->weight);
            if (!m->column || !m->weight)
                status = MPILENS_MAP_ERR_NOMEM;
        }
    }
    free(by_to);
    free(col_start);
    return status;
}

int ml_map_matrix_graph(mpilens_map_matrix_t *m)
{
    if (m->row_start)
        return MPILENS_MAP_OK;
    int status = ml_map_matrix_merge(m);
    if (status == MPILENS_MAP_OK)
        status = fill_graph(m);
    if (status != MPILENS_MAP_OK)
        drop_graph(m);
    return status;
}

/* ---- queries ---------------------------------------------------------------------------------- */

mpilens_map_status_t mpilens_map_matrix_order(const mpilens_map_matrix_t *matrix, int *order)
{
    if (!matrix || !order)
        return MPILENS_MAP_ERR_ARG;
    *order = matrix->order;
    return MPILENS_MAP_OK;
}

mpilens_map_status_t mpilens_map_matrix_nonzeros(const mpilens_map_matrix_t *matrix, size_t *nonzeros)
{
    if (!matrix || !nonzeros)
        return MPILENS_MAP_ERR_ARG;
    /* Merging changes how the entries are stored, not the matrix they describe: a const matrix
     * (always one this library allocated) may be merged. */
    int status = ml_map_matrix_merge((mpilens_map_matrix_t *)matrix);
    if (status != MPILENS_MAP_OK)
        return status;
    *nonzeros = matrix->count;
    return MPILENS_MAP_OK;
}

mpilens_map_status_t mpilens_map_matrix_total(const mpilens_map_matrix_t *matrix, double *bytes)
{
    if (!matrix || !bytes)
        return MPILENS_MAP_ERR_ARG;
    double total = 0;
    for (size_t e = 0; e < matrix->count; e++)
        total += matrix->bytes[e];
    *bytes = total;
    return MPILENS_MAP_OK;
}

mpilens_map_status_t mpilens_map_matrix_entries(mpilens_map_matrix_t *matrix, size_t *count, const int **from,
                                                const int **to, const double **bytes)
{
    if (!matrix || !count || !from || !to || !bytes)
        return MPILENS_MAP_ERR_ARG;
    int status = ml_map_matrix_merge(matrix);
    if (status != MPILENS_MAP_OK)
        return status;
    *count = matrix->count;
    *from = matrix->from;
    *to = matrix->to;
    *bytes = matrix->bytes;
    return MPILENS_MAP_OK;
}

/* ---- files ------------------------------------------------------------------------------------ */

int ml_map_read_file(const char *path, char **text, size_t *length)
{
    FILE *file = fopen(path, "rb");
    if (!file)
        return MPILENS_MAP_ERR_IO;
    size_t used = 0, capacity = 0;
    char *buffer = NULL;
    int status = MPILENS_MAP_OK;
    for (;;) {
        if (used + 1 >= capacity) {
            size_t grown = capacity ? 2 * capacity : 65536;
            char *more = grown > capacity ? realloc(buffer, grown) : NULL;
            if (!more) {
                status = MPILENS_MAP_ERR_NOMEM;
                break;
            }
            buffer = more;
            capacity = grown;
        }
        size_t got = fread(buffer + used, 1, capacity - used - 1, file);
        used += got;
        if (got == 0)
            break;
    }
    if (status == MPILENS_MAP_OK && ferror(file))
        status = MPILENS_MAP_ERR_IO;
    fclose(file);
    if (status != MPILENS_MAP_OK) {
        free(buffer);
        return status;
    }
    buffer[used] = '\0';
    *text = buffer;
    *length = used;
    return MPILENS_MAP_OK;
}

/* Lines of a text held in memory, each NUL-terminated in place when it is read. */
typedef struct {
    char *next;
} lines_t;

static char *next_line(lines_t *lines)
{
    if (!*lines->next)
        return NULL;
    char *line = lines->next, *end = strchr(line, '\n');
    if (end) {
        *end = '\0';
        lines->next = end + 1;
    } else {
        lines->next = line + strlen(line);
        end = lines->next;
    }
    if (end > line && end[-1] == '\r')
        end[-1] = '\0';
    return line;
}

static char *skip_blanks(char *c)
{
    while (*c == ' ' || *c == '\t')
        c++;
    return c;
}

static int is_blank(const char *line) { return *skip_blanks((char *)line) == '\0'; }

/* A process index, 0 .. INT_MAX - 1 so that the order (largest + 1) is still an int. */
static int parse_index(char **cursor, int *index)
{
    char *c = skip_blanks(*cursor);
    long value = 0;
    if (!isdigit((unsigned char)*c))
        return 0;
    for (; isdigit((unsigned char)*c); c++) {
        value = value * 10 + (*c - '0');
        if (value >= INT_MAX)
            return 0;
    }
    *index = (int)value;
    *cursor = c;
    return 1;
}

/* A count of bytes or messages: a finite non-negative number. */
static int parse_amount(char **cursor, double *amount)
{
    char *c = skip_blanks(*cursor), *end;
    if (*c == '-')
        return 0;
    double value = strtod(c, &end);
    if (end == c || !isfinite(value))
        return 0;
    *amount = value;
    *cursor = end;
    return 1;
}

static int expect(char **cursor, char separator)
{
    char *c = skip_blanks(*cursor);
    if (*c != separator)
        return 0;
    *cursor = c + 1;
    return 1;
}

/* "sender,receiver,bytes[,count]". */
static int parse_csv_line(char *line, int *from, int *to, double *bytes)
{
    char *c = line;
    double count;
    if (!parse_index(&c, from) || !expect(&c, ',') || !parse_index(&c, to) || !expect(&c, ',') ||
        !parse_amount(&c, bytes))
        return 0;
    if (expect(&c, ',') && !parse_amount(&c, &count))
        return 0;
    return *skip_blanks(c) == '\0';
}

/* The order is one more than the largest index seen, sending anything or not. */
static int load_csv(lines_t *lines, mpilens_map_matrix_t *m)
{
    int largest = -1, first = 1;
    for (char *line; (line = next_line(lines));) {
        if (is_blank(line))
            continue;
        int header = first && isalpha((unsigned char)*skip_blanks(line));
        first = 0;
        if (header)
            continue;
        int from, to;
        double bytes;
        if (!parse_csv_line(line, &from, &to, &bytes))
            return MPILENS_MAP_ERR_FORMAT;
        int status = append(m, from, to, bytes);
        if (status != MPILENS_MAP_OK)
            return status;
        if (from > largest)
            largest = from;
        if (to > largest)
            largest = to;
    }
    if (largest < 0)
        return MPILENS_MAP_ERR_FORMAT;
    m->order = largest + 1;
    return MPILENS_MAP_OK;
}

/* One line per sender, as many values as lines. */
static int load_dense(lines_t *lines, mpilens_map_matrix_t *m)
{
    int rows = 0, order = -1;
    for (char *line; (line = next_line(lines));) {
        if (is_blank(line))
            continue;
        if (rows == INT_MAX - 1 || (order >= 0 && rows == order))
            return MPILENS_MAP_ERR_FORMAT;
        int columns = 0;
        double bytes;
        for (char *c = line; *skip_blanks(c); columns++) {
            if (!parse_amount(&c, &bytes) || (*c && *c != ' ' && *c != '\t') || columns == order ||
                columns == INT_MAX - 1)
                return MPILENS_MAP_ERR_FORMAT;
            int status = append(m, rows, columns, bytes);
            if (status != MPILENS_MAP_OK)
                return status;
        }
        if (order < 0)
            order = columns;
        if (columns != order)
            return MPILENS_MAP_ERR_FORMAT;
        rows++;
    }
    if (order < 0 || rows != order)
        return MPILENS_MAP_ERR_FORMAT;
    m->order = order;
    m->merged = 1; /* row-major, one value per pair */
    return MPILENS_MAP_OK;
}

/* "%%MatrixMarket matrix coordinate integer|real general|symmetric": whether symmetric. */
static int parse_banner(const char *line, int *symmetric)
{
    char words[5][32];
    if (sscanf(line, "%31s %31s %31s %31s %31s", words[0], words[1], words[2], words[3], words[4]) != 5 ||
        strcmp(words[0], "%%MatrixMarket") != 0 || strcasecmp(words[1], "matrix") != 0 ||
        strcasecmp(words[2], "coordinate") != 0 ||
        (strcasecmp(words[3], "integer") != 0 && strcasecmp(words[3], "real") != 0))
        return 0;
    *symmetric = strcasecmp(words[4], "symmetric") == 0;
    return *symmetric || strcasecmp(words[4], "general") == 0;
}

/* "ROWS COLUMNS ENTRIES", a square matrix; ENTRIES is not trusted to size anything. */
static int parse_mm_size(char *line, int *order, size_t *entries)
{
    char *c = line, *end;
    int rows, columns;
    if (!parse_index(&c, &rows) || !parse_index(&c, &columns) || rows != columns || rows < 1)
        return 0;
    c = skip_blanks(c);
    if (!isdigit((unsigned char)*c))
        return 0;
    unsigned long long count = strtoull(c, &end, 10);
    if (*skip_blanks(end) || count == ULLONG_MAX || count > SIZE_MAX)
        return 0;
    *order = rows;
    *entries = (size_t)count;
    return 1;
}

/* "ROW COLUMN VALUE", 1-based. */
static int parse_mm_entry(char *line, int order, int *from, int *to, double *bytes)
{
    char *c = line;
    int row, column;
    if (!parse_index(&c, &row) || !parse_index(&c, &column) || !parse_amount(&c, bytes) || *skip_blanks(c) || row < 1 ||
        row > order || column < 1 || column > order)
        return 0;
    *from = row - 1;
    *to = column - 1;
    return 1;
}

/* Matrix Market coordinate; a symmetric file holds one triangle, each entry stands for both. */
static int load_matrix_market(lines_t *lines, mpilens_map_matrix_t *m)
{
    int symmetric, order = 0;
    size_t declared = 0, read = 0;
    char *line = next_line(lines);
    if (!parse_banner(line, &symmetric))
        return MPILENS_MAP_ERR_FORMAT;
    while ((line = next_line(lines)) && (*line == '%' || is_blank(line)))
        ;
    if (!line || !parse_mm_size(line, &order, &declared))
        return MPILENS_MAP_ERR_FORMAT;
    while ((line = next_line(lines))) {
        if (is_blank(line))
            continue;
        int from, to;
        double bytes;
        if (read == declared || !parse_mm_entry(line, order, &from, &to, &bytes))
            return MPILENS_MAP_ERR_FORMAT;
        read++;
        int status = append(m, from, to, bytes);
        if (status == MPILENS_MAP_OK && symmetric && from != to)
            status = append(m, to, from, bytes);
        if (status != MPILENS_MAP_OK)
            return status;
    }
    if (read != declared)
        return MPILENS_MAP_ERR_FORMAT;
    m->order = order;
    return MPILENS_MAP_OK;
}

/* The format is read from the content: Matrix Market opens with its banner, CSV lines have
 * commas, the dense format has neither. */
static int load_text(char *text, mpilens_map_matrix_t *m)
{
    char *start = text;
    while (isspace((unsigned char)*start))
        start++;
    if (!*start)
        return MPILENS_MAP_ERR_FORMAT;
    lines_t lines = {start};
    size_t first_line = strcspn(start, "\n");
    if (strncmp(start, "%%MatrixMarket", 14) == 0)
        return load_matrix_market(&lines, m);
    if (memchr(start, ',', first_line))
        return load_csv(&lines, m);
    return load_dense(&lines, m);
}

mpilens_map_status_t mpilens_map_matrix_load(const char *path, mpilens_map_matrix_t **matrix)
{
    if (!path || !matrix)
        return MPILENS_MAP_ERR_ARG;
    char *text;
    size_t length;
    int status = ml_map_read_file(path, &text, &length);
    if (status != MPILENS_MAP_OK)
        return status;
    mpilens_map_matrix_t *m = calloc(1, sizeof *m);
    status = m ? load_text(text, m) : MPILENS_MAP_ERR_NOMEM;
    free(text);
    if (status != MPILENS_MAP_OK) {
        mpilens_map_matrix_free(m);
        return status;
    }
    *matrix = m;
    return MPILENS_MAP_OK;
}
