/*
 * The walk's columns and state, and the rows it appends to its own buffers (a journal's rows reach the caller's
 * only once it is tabled whole): the arena of a journal's strings, each column's values, the user message being
 * gathered.
 *
 * Part of the one translation unit ``_native.c`` includes, in order (each part reads only what the parts before it
 * define).
 */

/* -- the walk ---------------------------------------------------------------------------------------------------- */

/* The columns the walk appends to, by table, in this order (named below, ``COLUMN_NAMES``). */
enum {
    M_INDEX, M_SEQ, M_PENDING, M_ROLE, M_TEXT, M_THINKING, M_USES, M_RESULTS, M_PROVIDERS, M_COLUMNS
};
enum {
    C_ID, C_NAME, C_INPUT, C_CALL_SEQ, C_RESULT_SEQ, C_IS_ERROR, C_REMOTE, C_KIND, C_DISPATCHED, C_MADE_AT,
    C_ANSWERED_AT, C_DURATION, C_TIMED, C_DEFERRED, C_NOTE, C_HANDLE, C_APPROVED, C_RESULT_CHARS, C_COLUMNS
};
enum {
    R_SEQ, R_ITERATION, R_TIME, R_STOP_REASON, R_IN, R_OUT, R_CACHE_READ, R_CACHE_CREATE, R_THINKING, R_COLUMNS
};
enum {
    S_STARTED_AT, S_ENDED_AT, S_SEGMENT, S_FIRST_SEQ, S_LAST_SEQ, S_CLAIMED_BY, S_CLAIMED_AT, S_ENDING,
    S_TERMINAL_MESSAGE, S_LLM_CALLS, S_TOOL_CALLS, S_IN, S_OUT, S_COLUMNS
};
#define ALL_COLUMNS (M_COLUMNS + C_COLUMNS + R_COLUMNS + S_COLUMNS)
/* Each column's name in its table's schema, in the order above: the module hands them to Python (``COLUMNS``),
 * whose builder gives the walk the buffers of the columns so named, in this order. */
static const char *const COLUMN_NAMES[ALL_COLUMNS] = {
    /* messages */
    "index", "seq", "pending", "role", "text", "thinking_chars", "tool_use_count", "tool_result_count",
    "provider_blocks",
    /* tool_calls */
    "call_id", "name", "input", "call_seq", "result_seq", "is_error", "remote", "kind", "dispatched", "made_at",
    "answered_at", "duration", "timed", "deferred", "deferred_note", "deferred_handle", "call_approved", "result_chars",
    /* responses */
    "seq", "iteration", "time", "stop_reason", "in_tokens", "out_tokens", "cache_read_tokens", "cache_create_tokens",
    "thinking_tokens",
    /* segments */
    "started_at", "ended_at", "segment", "first_seq", "last_seq", "claimed_by", "claimed_at", "ending",
    "terminal_message", "llm_calls", "tool_calls", "in_tokens", "out_tokens",
};

/* How a column is laid out (tables.columns.ColumnBuffer): 8-byte integers, 1-byte booleans, or text (each row's
 * end offset as an int64 in ``values``, its bytes in ``data``); every column has one validity byte per row. */
enum { COLUMN_INT64, COLUMN_UINT64, COLUMN_BOOL, COLUMN_TEXT };
static const unsigned char COLUMN_KINDS[ALL_COLUMNS] = {
    /* messages */
    COLUMN_INT64, COLUMN_UINT64, COLUMN_BOOL, COLUMN_TEXT, COLUMN_TEXT, COLUMN_INT64, COLUMN_INT64, COLUMN_INT64,
    COLUMN_INT64,
    /* tool_calls */
    COLUMN_TEXT, COLUMN_TEXT, COLUMN_TEXT, COLUMN_UINT64, COLUMN_UINT64, COLUMN_BOOL, COLUMN_BOOL, COLUMN_TEXT,
    COLUMN_BOOL, COLUMN_INT64, COLUMN_INT64, COLUMN_INT64, COLUMN_BOOL, COLUMN_BOOL, COLUMN_TEXT, COLUMN_TEXT,
    COLUMN_BOOL, COLUMN_INT64,
    /* responses */
    COLUMN_UINT64, COLUMN_INT64, COLUMN_INT64, COLUMN_TEXT, COLUMN_INT64, COLUMN_INT64, COLUMN_INT64, COLUMN_INT64,
    COLUMN_INT64,
    /* segments */
    COLUMN_INT64, COLUMN_INT64, COLUMN_INT64, COLUMN_UINT64, COLUMN_UINT64, COLUMN_TEXT, COLUMN_INT64, COLUMN_TEXT,
    COLUMN_TEXT, COLUMN_INT64, COLUMN_INT64, COLUMN_INT64, COLUMN_INT64,
};

/* One column's rows of the journal being walked, appended to the caller's bytearrays only once it is tabled. */
typedef struct {
    bytes_buffer values;
    bytes_buffer valid;
    bytes_buffer data;
} column;

typedef struct {
    text_ref id, name;
    const unsigned char *input;
    Py_ssize_t input_length;
    uint64_t made_seq;
    moment made;
    int answered;
    uint64_t answered_seq;
    moment answered_at;
    int is_error, remote, kind, dispatched;
    Py_ssize_t result_chars;
    int deferred;
    text_ref note, handle;
    int approved;
    int timed;
    int64_t duration;
    uint64_t closed_by; /* the seq of the record that closed its turn before it was answered (0: none) */
} call;

typedef struct {
    int open; /* the last message is a user message still taking merged blocks */
    uint64_t seq;
    int text_blocks;
    Py_ssize_t thinking;
    int64_t uses, results, providers;
} message_row;

typedef struct {
    column columns[ALL_COLUMNS];
    bytes_buffer arena;    /* ids, names, notes: kept for the journal */
    bytes_buffer text;     /* the open user message's text */
    bytes_buffer turn_text; /* the turn's assistant message text */
    int64_t message_index;
    message_row last; /* the open user message, when ``last.open`` */
    /* the turn in flight */
    int in_turn;
    uint64_t turn_seq;
    Py_ssize_t turn_thinking;
    int64_t turn_uses, turn_results, turn_providers;
    int turn_text_blocks;
    Py_ssize_t turn_first_call;
    int64_t turn_result_count;
    uint64_t turn_first_result_seq;
    /* every call of the journal */
    call *calls;
    Py_ssize_t call_count, call_capacity;
    int64_t search_budget;
    /* the state */
    uint64_t counters[9]; /* llm, tool, remote, mcp, in, out, cache_read, cache_create, thinking (wrapping) */
    int64_t by_kind[MAX_NAMES];
    int by_kind_seen[MAX_NAMES];
    uint64_t turns;
    uint64_t context_tokens;
    int saw_assistant;
    int64_t last_iteration;
    text_ref last_stop;
    int terminal_set;
    text_ref terminal_reason, terminal_message;
    moment ended;
    int reopened;
    int terminal_waits_claim; /* a terminal with no claim since (a new turn then is a finding) */
    int any_terminal, turn_after_terminal;
    /* The last terminal's seq, and the first record after it (what reopened the run): its seq, kind and, for a
     * claim, who claimed it (the fold's AfterTerminal, which the phrase "reopened by ... at seq N" reads). */
    uint64_t last_terminal_seq, after_seq;
    int after_set, after_kind, after_claimed;
    text_ref after_by;
    text_list approvals, call_approvals, memory_keys;
    int64_t resumes;
    /* segments */
    int64_t segment_index;
    uint64_t segment_first_seq;
    moment segment_started;
    int segment_claimed;
    text_ref segment_claimed_by;
    moment segment_claimed_at;
    int segment_terminal;
    text_ref segment_reason, segment_message;
    int64_t segment_llm, segment_tools;
    uint64_t segment_in, segment_out;
    /* for the runs row and the degraded_analysis finding */
    int64_t undated, results, kindless;
    moment last_time, last_dated;
    uint64_t last_dated_seq;
    /* ``meta.created`` and the meta record's own time: the run's start, and its wall clock to the last dated record */
    moment created, first_time;
    int wall_timed;
    int64_t wall_clock;
    /* each record dated before the dated record before it: the times_out_of_order findings */
    backstep *backsteps;
    Py_ssize_t backstep_count, backstep_capacity;
} walk;

static PyObject *arena_string(walk *w, text_ref ref) {
    return PyUnicode_DecodeUTF8(w->arena.data + ref.offset, ref.length, "strict");
}

static PyObject *arena_string_or_none(walk *w, text_ref ref) {
    if (ref.length == 0) Py_RETURN_NONE;
    return arena_string(w, ref);
}

static int read_into_arena(walk *w, cursor *c, text_ref *ref, Py_ssize_t *chars) {
    ref->offset = w->arena.length;
    int status = read_string(c, &w->arena, chars);
    ref->length = w->arena.length - ref->offset;
    return status;
}

static int arena_equal(walk *w, text_ref a, text_ref b) {
    /* Two empty strings are equal without a look at the arena, which holds no data (NULL) until a string has bytes. */
    return a.length == b.length &&
           (a.length == 0 || memcmp(w->arena.data + a.offset, w->arena.data + b.offset, (size_t)a.length) == 0);
}

static int arena_is(walk *w, text_ref a, const char *word) {
    return (size_t)a.length == strlen(word) &&
           (a.length == 0 || memcmp(w->arena.data + a.offset, word, (size_t)a.length) == 0);
}

static int column_valid(column *target, int valid) {
    unsigned char flag = (unsigned char)valid;
    return buffer_put(&target->valid, &flag, 1);
}

static int put_int(walk *w, int index, int64_t value) {
    column *target = &w->columns[index];
    if (buffer_put(&target->values, &value, sizeof(value)) < 0 || column_valid(target, 1) < 0) return STOP_ERROR;
    return 0;
}

static int put_uint(walk *w, int index, uint64_t value) {
    column *target = &w->columns[index];
    if (buffer_put(&target->values, &value, sizeof(value)) < 0 || column_valid(target, 1) < 0) return STOP_ERROR;
    return 0;
}

static int put_bool(walk *w, int index, int value) {
    column *target = &w->columns[index];
    unsigned char flag = value ? 1 : 0;
    if (buffer_put(&target->values, &flag, 1) < 0 || column_valid(target, 1) < 0) return STOP_ERROR;
    return 0;
}

static int put_text(walk *w, int index, const char *text, Py_ssize_t length) {
    column *target = &w->columns[index];
    if (buffer_put(&target->data, text, length) < 0) return STOP_ERROR;
    int64_t end = (int64_t)target->data.length;
    if (buffer_put(&target->values, &end, sizeof(end)) < 0 || column_valid(target, 1) < 0) return STOP_ERROR;
    return 0;
}

static int put_null(walk *w, int index) {
    column *target = &w->columns[index];
    int64_t zero = COLUMN_KINDS[index] == COLUMN_TEXT ? (int64_t)target->data.length : 0;
    Py_ssize_t width = COLUMN_KINDS[index] == COLUMN_BOOL ? 1 : (Py_ssize_t)sizeof(zero);
    if (buffer_put(&target->values, &zero, width) < 0 || column_valid(target, 0) < 0) return STOP_ERROR;
    return 0;
}

static int put_word(walk *w, int index, const char *word) { return put_text(w, index, word, (Py_ssize_t)strlen(word)); }

static int put_arena(walk *w, int index, text_ref ref) { return put_text(w, index, w->arena.data + ref.offset, ref.length); }

/* Python's ``value or None`` of a string. */
static int put_arena_or_null(walk *w, int index, text_ref ref) {
    return ref.length ? put_arena(w, index, ref) : put_null(w, index);
}

/* go_time(): the instant in microseconds (read_time took only times a column holds), null when undated. */
static int put_micros(walk *w, int index, const moment *m) {
    if (!m->dated) return put_null(w, index);
    return put_int(w, index, m->seconds * 1000000 + m->nanos / 1000);
}

static int put_message(walk *w, uint64_t seq, int pending, const char *role, const char *text, Py_ssize_t length,
                       Py_ssize_t thinking, int64_t uses, int64_t results, int64_t providers) {
    if (put_int(w, M_INDEX, w->message_index++) < 0 || put_uint(w, M_SEQ, seq) < 0 ||
        put_bool(w, M_PENDING, pending) < 0 || put_word(w, M_ROLE, role) < 0 || put_text(w, M_TEXT, text, length) < 0 ||
        put_int(w, M_THINKING, thinking) < 0 || put_int(w, M_USES, uses) < 0 || put_int(w, M_RESULTS, results) < 0 ||
        put_int(w, M_PROVIDERS, providers) < 0)
        return STOP_ERROR;
    return 0;
}

static int flush_user_message(walk *w) {
    if (!w->last.open) return 0;
    w->last.open = 0;
    return put_message(w, w->last.seq, 0, "user", w->text.data, w->text.length, w->last.thinking, w->last.uses,
                       w->last.results, w->last.providers);
}

static void open_user_message(walk *w, uint64_t seq) {
    w->last.open = 1;
    w->last.seq = seq;
    w->last.text_blocks = 0;
    w->last.thinking = 0;
    w->last.uses = w->last.results = w->last.providers = 0;
    w->text.length = 0;
}
