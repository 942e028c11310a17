/*
 * journaltools.protocol._canonical: proves a whole file journal canonical in one pass over its bytes.
 *
 * A line is canonical when it is exactly what the Go encoder writes for the record it decodes to. The Python
 * fast path proves it by decoding and re-encoding; this module proves it by checking the bytes against the
 * record model itself: keys in the struct's field order, each field at most once, a field Go omits when zero
 * absent when zero, strings escaped exactly as Go escapes them, integers in their one spelling and range,
 * times in Go's RFC 3339 form, raw JSON compact.
 *
 * The model is not written here: ``configure`` receives it from Python, derived from the msgspec structs of
 * ``protocol.kinds`` (``protocol.native``), so the two can never disagree on a field. It is the newest line's
 * model, in which the fields that line added (a record's time, the agent, kinds, summaries) are flagged: a scan
 * proves a line against it and says whether any flagged field was present, so the caller can refuse the proof
 * for a journal of the August build, whose encoder never writes them.
 *
 * The check is conservative: it may send a canonical line to the Python path (a key with an escape, a
 * surrogate escape inside raw JSON, nesting deeper than it follows), never the reverse. ``scan_journal``
 * answers None for anything it does not prove, and the caller then takes the Python path for the journal.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

enum field_type {
    T_STR = 0,         /* a string Go always writes */
    T_STR_OMIT = 1,    /* a string Go omits when empty */
    T_INT64 = 2,       /* an int64 Go always writes */
    T_INT64_OMIT = 3,  /* an int64 Go omits when zero */
    T_UINT64 = 4,      /* a uint64 Go always writes */
    T_BOOL_OMIT = 5,   /* a bool Go omits when false */
    T_TIME = 6,        /* a time.Time: a string in Go's RFC 3339 form */
    T_BYTES_OMIT = 7,  /* a []byte Go omits when empty: padded standard base64 */
    T_RAW = 8,         /* json.RawMessage: compact JSON, kept verbatim */
    T_OBJECT = 9,      /* a nested struct Go always writes */
    T_OBJECT_OMIT = 10, /* a pointer to a struct, omitted when nil (never written as null) */
    T_LIST_OR_NULL = 11, /* a slice of structs: null (nil) or an array */
    T_UINT_MAP_OR_NULL = 12, /* a map[string]uint64: null (nil) or an object with sorted keys */
    T_TIME_OMIT = 13,  /* a time.Time Go omits when zero (omitzero): never the zero time */
    T_INT_MAP_OMIT = 14, /* a map of int keys to int64 values, omitted when empty: decimal keys sorted as text */
    T_TYPE_COUNT = 15
};

#define MAX_FIELDS 32
#define MAX_SCHEMAS 64
#define MAX_RAW_DEPTH 200
/* The protocol index of a record whose protocol id is none of the configured ones (the caller reads it). */
#define OTHER_PROTOCOL 255

typedef struct {
    char *name;
    Py_ssize_t name_length;
    int type;
    int schema; /* the nested struct's schema for T_OBJECT, T_OBJECT_OMIT and T_LIST_OR_NULL */
    int newest_only; /* a field only the newest line writes: a scan reports that it saw one */
} field;

typedef struct {
    int count;
    field fields[MAX_FIELDS];
} schema;

typedef struct {
    int configured;
    int schema_count;
    schema schemas[MAX_SCHEMAS];
    /* the record schema's fields that the scan reports */
    int seq_field;
    int protocol_field;
    int optional_field;
    /* the protocol ids the scan recognises; a record with any other id is left to the Python path */
    int protocol_count;
    char *protocols[MAX_FIELDS];
    Py_ssize_t protocol_lengths[MAX_FIELDS];
} model;

static model the_model;

typedef struct {
    const unsigned char *p;
    const unsigned char *end;
    int newest; /* set when a field flagged newest_only was present */
} cursor;

/* What one record line reports to the caller. */
typedef struct {
    uint64_t seq;
    int protocol;
    int optional;
} envelope;

static int check_object(cursor *c, int schema_index, envelope *out, int depth);

/* The scanner, in parts of one idea each: one translation unit, so its functions stay static and the compiler sees
 * every call whole. */
#include "_canonical_parts/strings.h"
#include "_canonical_parts/scalars.h"
#include "_canonical_parts/values.h"
#include "_canonical_parts/model.h"
#include "_canonical_parts/scans.h"
#include "_canonical_parts/files.h"

static PyMethodDef methods[] = {
    {"join_lines", join_lines, METH_O, join_lines_doc},
    {"read_files_into", read_files_into, METH_VARARGS, read_files_into_doc},
    {"stat_files", stat_files, METH_VARARGS, stat_files_doc},
    {"json_array", json_array, METH_O, json_array_doc},
    {"proves_line", proves_line, METH_O, proves_line_doc},
    {"scan_batch", scan_batch, METH_VARARGS, scan_batch_doc},
    {"configure", configure, METH_VARARGS, configure_doc},
    {"scan_journal", scan_journal, METH_O, scan_journal_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_definition = {
    PyModuleDef_HEAD_INIT, "_canonical", "Proves whole file journals canonical from their bytes.", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__canonical(void) { return PyModule_Create(&module_definition); }
