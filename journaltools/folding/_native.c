/*
 * journaltools.folding._native: the table rows of one clean journal, folded natively from its proven bytes.
 *
 * The Python fold (journaltools.folding) is the reference; this is its fast path for the common case, and it
 * never decides anything the reference would decide differently. It takes a journal the scanner proved canonical
 * (protocol._canonical: every line exactly what the Go encoder writes, keys in field order, strings escaped as Go
 * escapes them) whose meta record the caller has already checked, walks its lines once, folds them by the
 * runtime's rules and appends the rows of the messages, tool_calls, responses and segments tables straight onto
 * the builder's column lists, returning what the runs row needs.
 *
 * "Clean" is the whole contract: the moment a record would give the reference fold any finding (a refusal, a
 * warning, a schema violation) but the warnings it reports itself (a record dated before the one before it, a turn
 * closed with calls unanswered: ``backsteps``, ``unanswered``), or holds anything this walk does not model (a block with two kinds set, the same
 * call id twice in a turn, a second deferral, a year 0), the walk stops, takes back every row it appended and
 * answers None. The caller then folds the journal in Python, which reports what it finds. So a journal is either
 * tabled here exactly as the reference tables it, or not here at all; a differential test holds that.
 *
 * Strings are read by the escapes Go writes (\" \\ \b \f \n \r \t, and \u00XX, \u2028, \u2029 and any other \uXXXX
 * short of a surrogate); any other escape stops the walk. Character counts are counts of code points, as Python's len().
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/* The payload kinds this walk folds (the keys a record's payload is written under), in its own order: the
 * Python side maps each protocol to one of them by name (``KINDS`` below), and a kind the Python declarations hold
 * that is not here to a code that gives the journal back (below -1). */
enum { K_META, K_ASSISTANT, K_USER, K_TOOL_RESULT, K_DEFERRED, K_DECISION, K_CALL_APPROVAL, K_MEMORY, K_TERMINAL,
       K_CLAIM, K_COUNT };
static const char *const KIND_NAMES[K_COUNT] = {"meta",     "assistant",     "user",
                                                "tool_result", "deferred", "decision",
                                                "call_approval", "memory_revisions", "terminal",
                                                "claim"};
/* The terminal reasons the runtime knows and the provider kinds' tokens (a kind's number is its index; 0 is the
 * kind of a result that names none), as ``protocol.kinds`` declares them: handed over once by ``configure`` at
 * import, never restated here. */
#define MAX_NAMES 32
static PyObject *configured = NULL; /* the two tuples of str, kept alive: the pointers below are into them */
static const char *TERMINAL_REASONS[MAX_NAMES];
static int terminal_reason_count = 0;
static const char *KIND_TOKENS[MAX_NAMES];
static int kind_token_count = 0;
static int kind_remote = -1, kind_mcp = -1;
/* A turn with more calls than this is left to Python: results and deferrals find their call by a linear search. */
#define MAX_TURN_CALLS 512
/* Steps of the searches a call approval makes through earlier turns, per record on average, before giving up. */
#define SEARCH_STEPS_PER_RECORD 64
/* datetime.min and datetime.max in microseconds since 1970: the times a column holds (tables.columns.ValueFit). */
#define MIN_MICROS (-62135596800LL * 1000000LL)
#define MAX_MICROS (253402300799LL * 1000000LL + 999999LL)

/* The walk, in parts of one idea each: one translation unit, so its functions stay static and the compiler sees
 * every call whole. */
#include "_native_parts/json.h"
#include "_native_parts/times.h"
#include "_native_parts/rows.h"
#include "_native_parts/turns.h"
#include "_native_parts/records.h"
#include "_native_parts/summary.h"
#include "_native_parts/walk.h"

/*
 * fold_rows(data, starts, kinds, prompt, columns) -> tuple | None
 *
 * ``data``: the journal's bytes; ``starts``: each line's start (int64, native order, as the scanner gives them);
 * ``kinds``: each line's payload kind (int8, -1 for a protocol the runtime does not know); ``prompt``: the meta
 * record's prompt, the conversation's first message; ``columns``: the builder's column buffers (a tuple of
 * ``(values, valid, data)`` bytearrays each, ``data`` None but for text: tables.columns.ColumnBuffer), messages,
 * tool_calls, responses and segments in enum order. None leaves the buffers as they were.
 */
static PyObject *fold_rows(PyObject *Py_UNUSED(module), PyObject *args) {
    Py_buffer data, starts, kinds;
    PyObject *prompt, *columns;
    if (kind_token_count == 0) {
        PyErr_SetString(PyExc_RuntimeError, "fold_rows: configure the walk first (folding.native does at import)");
        return NULL;
    }
    if (!PyArg_ParseTuple(args, "y*y*y*UO!", &data, &starts, &kinds, &prompt, &PyTuple_Type, &columns)) return NULL;
    PyObject *result = NULL;
    walk w;
    memset(&w, 0, sizeof(w));
    walk_borrow(&w);
    Py_ssize_t count = kinds.len;
    const int64_t *line_starts = (const int64_t *)starts.buf;
    const int8_t *line_kinds = (const int8_t *)kinds.buf;
    /* No columns: the caller wants the summary only (a listing), and no row is kept. */
    int tabled = PyTuple_GET_SIZE(columns) != 0;
    if ((tabled && PyTuple_GET_SIZE(columns) != ALL_COLUMNS) || starts.len != count * (Py_ssize_t)sizeof(int64_t) ||
        count < 1 || line_kinds[0] != K_META) {
        PyErr_SetString(PyExc_ValueError, "fold_rows: columns, starts and kinds disagree");
        goto done;
    }
    target targets[ALL_COLUMNS];
    for (int i = 0; i < (tabled ? ALL_COLUMNS : 0); i++) {
        PyObject *item = PyTuple_GET_ITEM(columns, i);
        if (!PyTuple_Check(item) || PyTuple_GET_SIZE(item) != 3) goto bad_columns;
        targets[i].values = PyTuple_GET_ITEM(item, 0);
        targets[i].valid = PyTuple_GET_ITEM(item, 1);
        targets[i].data = PyTuple_GET_ITEM(item, 2);
        if (targets[i].data == Py_None) targets[i].data = NULL;
        if (!PyByteArray_Check(targets[i].values) || !PyByteArray_Check(targets[i].valid) ||
            (COLUMN_KINDS[i] == COLUMN_TEXT) != (targets[i].data != NULL) ||
            (targets[i].data != NULL && !PyByteArray_Check(targets[i].data)))
            goto bad_columns;
    }
    w.turns = 1;
    w.search_budget = (int64_t)count * SEARCH_STEPS_PER_RECORD + 4096;
    /* The conversation opens with the prompt: one text block, which later user records merge into. */
    Py_ssize_t prompt_length;
    const char *prompt_text = PyUnicode_AsUTF8AndSize(prompt, &prompt_length);
    if (prompt_text == NULL) goto done;
    journal_walk walked = {data.buf, data.len, line_starts, line_kinds, count, prompt_text, prompt_length, 0, 0};
    int status;
    /* Nothing below touches a Python object until the walk is over: other threads run meanwhile. */
    Py_BEGIN_ALLOW_THREADS
    status = walk_journal(&w, &walked);
    Py_END_ALLOW_THREADS
    if (status == STOP_ERROR) PyErr_NoMemory(); /* the walk's only error: an allocation that failed */
    if (status == 0) {
        result = summary(&w, &walked);
        if (result == NULL) status = STOP_ERROR;
        /* Only a journal tabled whole reaches the caller's buffers. */
        if (status == 0 && tabled && commit_columns(&w, targets) < 0) {
            Py_CLEAR(result);
            status = STOP_ERROR;
        }
    }
    if (status == STOP_OTHER) result = Py_NewRef(Py_None);
    goto done;
bad_columns:
    PyErr_SetString(PyExc_TypeError, "fold_rows: each column is (values, valid, data) bytearrays, data for text only");
done:
    walk_free(&w);
    PyBuffer_Release(&data);
    PyBuffer_Release(&starts);
    PyBuffer_Release(&kinds);
    return result;
}

/* Copies the tuple's strings' UTF-8 pointers into ``names`` (the tuple outlives them: ``configured`` holds it). */
static int take_names(PyObject *tuple, const char **names, int *count, const char *what) {
    Py_ssize_t size = PyTuple_GET_SIZE(tuple);
    if (size < 1 || size > MAX_NAMES) {
        PyErr_Format(PyExc_ValueError, "configure: %s: between 1 and %d names, not %zd", what, MAX_NAMES, size);
        return -1;
    }
    for (Py_ssize_t i = 0; i < size; i++) {
        PyObject *name = PyTuple_GET_ITEM(tuple, i);
        if (!PyUnicode_Check(name) || (names[i] = PyUnicode_AsUTF8(name)) == NULL) {
            if (!PyErr_Occurred()) PyErr_Format(PyExc_TypeError, "configure: %s: names are str", what);
            return -1;
        }
    }
    *count = (int)size;
    return 0;
}

/*
 * configure(terminal_reasons, kind_tokens) -> None
 *
 * The runtime's terminal reasons and the provider kinds' tokens (``protocol.kinds.TERMINAL_REASONS``,
 * ``KIND_TOKENS``: the first the kind of a result that names none, ``remote`` and ``mcp`` among them), as tuples of
 * str.
 */
static PyObject *configure(PyObject *Py_UNUSED(module), PyObject *args) {
    PyObject *reasons, *tokens;
    if (!PyArg_ParseTuple(args, "O!O!", &PyTuple_Type, &reasons, &PyTuple_Type, &tokens)) return NULL;
    PyObject *kept = PyTuple_Pack(2, reasons, tokens);
    if (kept == NULL) return NULL;
    const char *reason_names[MAX_NAMES], *token_names[MAX_NAMES];
    int reason_count = 0, token_count = 0, remote = -1, mcp = -1;
    if (take_names(reasons, reason_names, &reason_count, "terminal reasons") < 0 ||
        take_names(tokens, token_names, &token_count, "kind tokens") < 0) {
        Py_DECREF(kept);
        return NULL;
    }
    /* The two kinds the runtime's counters name: the remote calls and the MCP calls that ran. */
    for (int i = 1; i < token_count; i++) {
        if (strcmp(token_names[i], "remote") == 0) remote = i;
        if (strcmp(token_names[i], "mcp") == 0) mcp = i;
    }
    if (remote < 0 || mcp < 0) {
        Py_DECREF(kept);
        PyErr_SetString(PyExc_ValueError, "configure: the kind tokens name no 'remote' or no 'mcp' after the first");
        return NULL;
    }
    memcpy(TERMINAL_REASONS, reason_names, sizeof(reason_names));
    memcpy(KIND_TOKENS, token_names, sizeof(token_names));
    terminal_reason_count = reason_count;
    kind_token_count = token_count;
    kind_remote = remote;
    kind_mcp = mcp;
    Py_XSETREF(configured, kept);
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"configure", configure, METH_VARARGS, "The terminal reasons and provider kind tokens, from protocol.kinds."},
    {"fold_rows", fold_rows, METH_VARARGS, "The table rows of one clean proven journal, or None (see the module)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_definition = {
    PyModuleDef_HEAD_INIT, "journaltools.folding._native",
    "The table rows of clean proven journals, folded natively (the Python fold is the reference).", -1, methods,
    NULL, NULL, NULL, NULL,
};

/* A tuple of str from ``count`` names, or NULL with the error set. */
static PyObject *names_tuple(const char *const *names, Py_ssize_t count) {
    PyObject *tuple = PyTuple_New(count);
    for (Py_ssize_t i = 0; tuple != NULL && i < count; i++) {
        PyObject *name = PyUnicode_FromString(names[i]);
        if (name == NULL) Py_CLEAR(tuple);
        else PyTuple_SET_ITEM(tuple, i, name);
    }
    return tuple;
}

PyMODINIT_FUNC PyInit__native(void) {
    PyObject *module = PyModule_Create(&module_definition);
    if (module == NULL) return NULL;
    PyObject *kinds = names_tuple(KIND_NAMES, K_COUNT);
    /* The walk's columns by table (messages, tool_calls, responses, segments), each in the walk's order. */
    PyObject *columns = PyTuple_New(4);
    const Py_ssize_t counts[4] = {M_COLUMNS, C_COLUMNS, R_COLUMNS, S_COLUMNS};
    for (Py_ssize_t table = 0, first = 0; columns != NULL && table < 4; first += counts[table++]) {
        PyObject *names = names_tuple(COLUMN_NAMES + first, counts[table]);
        if (names == NULL) Py_CLEAR(columns);
        else PyTuple_SET_ITEM(columns, table, names);
    }
    if (kinds == NULL || columns == NULL || PyModule_AddObject(module, "KINDS", kinds) < 0) {
        Py_XDECREF(kinds);
        Py_XDECREF(columns);
        Py_DECREF(module);
        return NULL;
    }
    if (PyModule_AddObject(module, "COLUMNS", columns) < 0) {
        Py_DECREF(columns);
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
