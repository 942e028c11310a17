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

/* -- growable bytes -------------------------------------------------------------------------------------------- */

typedef struct {
    char *data;
    Py_ssize_t length;
    Py_ssize_t capacity;
} bytes_buffer;

static int buffer_reserve(bytes_buffer *b, Py_ssize_t more) {
    if (b->length + more <= b->capacity) return 0;
    Py_ssize_t capacity = b->capacity ? b->capacity : 256;
    while (capacity < b->length + more) capacity *= 2;
    /* The raw allocator: the walk runs without the GIL (fold_rows raises MemoryError once it has it back). */
    char *data = PyMem_RawRealloc(b->data, (size_t)capacity);
    if (data == NULL) return -1;
    b->data = data;
    b->capacity = capacity;
    return 0;
}

/* An empty put copies nothing and is never passed on: its source may be NULL (an empty buffer's data), which
 * memcpy may not be given even for no bytes (C11 7.24.1), and a compiler may assume it is not NULL afterwards. */
static int buffer_put(bytes_buffer *b, const void *data, Py_ssize_t length) {
    if (length == 0) return 0;
    if (buffer_reserve(b, length) < 0) return -1;
    memcpy(b->data + b->length, data, (size_t)length);
    b->length += length;
    return 0;
}

/* A string kept in the walk's arena: its offset and length (the arena may move as it grows). */
typedef struct {
    Py_ssize_t offset;
    Py_ssize_t length;
} text_ref;

/* A list of strings kept in the walk's arena (approvals, call approvals, memory keys), made a Python list only
 * once the walk is over and holds the GIL again. */
typedef struct {
    text_ref *items;
    Py_ssize_t count;
    Py_ssize_t capacity;
} text_list;

static int text_list_add(text_list *list, text_ref item) {
    if (list->count == list->capacity) {
        Py_ssize_t capacity = list->capacity ? list->capacity * 2 : 8;
        text_ref *items = PyMem_RawRealloc(list->items, (size_t)capacity * sizeof(text_ref));
        if (items == NULL) return -1;
        list->items = items;
        list->capacity = capacity;
    }
    list->items[list->count++] = item;
    return 0;
}

/* -- reading canonical JSON ------------------------------------------------------------------------------------ */

/* What stops a walk: STOP_OTHER for a journal left to Python, STOP_ERROR for a Python exception set. */
#define STOP_OTHER (-1)
#define STOP_ERROR (-2)

typedef struct {
    const unsigned char *p;
    const unsigned char *end;
} cursor;

static int take(cursor *c, unsigned char ch) {
    if (c->p >= c->end || *c->p != ch) return STOP_OTHER;
    c->p++;
    return 0;
}

static int peek(cursor *c, unsigned char ch) { return c->p < c->end && *c->p == ch; }

static int take_word(cursor *c, const char *word) {
    size_t n = strlen(word);
    if ((size_t)(c->end - c->p) < n || memcmp(c->p, word, n) != 0) return STOP_OTHER;
    c->p += n;
    return 0;
}

static int hex_value(unsigned char ch) {
    if (ch >= '0' && ch <= '9') return ch - '0';
    if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
    if (ch >= 'A' && ch <= 'F') return ch - 'A' + 10;
    return -1;
}

static int put_utf8(bytes_buffer *out, unsigned int code) {
    unsigned char bytes[3];
    Py_ssize_t n;
    if (code < 0x80) {
        bytes[0] = (unsigned char)code;
        n = 1;
    } else if (code < 0x800) {
        bytes[0] = (unsigned char)(0xC0 | (code >> 6));
        bytes[1] = (unsigned char)(0x80 | (code & 0x3F));
        n = 2;
    } else {
        bytes[0] = (unsigned char)(0xE0 | (code >> 12));
        bytes[1] = (unsigned char)(0x80 | ((code >> 6) & 0x3F));
        bytes[2] = (unsigned char)(0x80 | (code & 0x3F));
        n = 3;
    }
    return buffer_put(out, bytes, n);
}

/* A string value, unescaped onto ``out`` (when not NULL); ``chars`` (when not NULL) gets its code points. */
static int read_string(cursor *c, bytes_buffer *out, Py_ssize_t *chars) {
    if (take(c, '"') < 0) return STOP_OTHER;
    Py_ssize_t count = 0;
    for (;;) {
        const unsigned char *start = c->p;
#if defined(__SSE2__)
        /* Sixteen bytes at a time while none ends the run of plain bytes: the text of a message is most of a
         * journal. A code point is a byte that is not a continuation byte (0x80-0xBF: below -64 as signed). */
        const __m128i quote = _mm_set1_epi8('"'), backslash = _mm_set1_epi8('\\'), continuation = _mm_set1_epi8(-64);
        const __m128i zero = _mm_setzero_si128();
        __m128i continuations = zero; /* per 8-byte half, how many continuation bytes were passed */
        while (c->end - c->p >= 16) {
            __m128i chunk = _mm_loadu_si128((const __m128i *)c->p);
            if (_mm_movemask_epi8(_mm_or_si128(_mm_cmpeq_epi8(chunk, quote), _mm_cmpeq_epi8(chunk, backslash)))) break;
            /* 0xFF per continuation byte, made 1 and summed into the two halves (no popcount instruction needed) */
            __m128i ones = _mm_sub_epi8(zero, _mm_cmplt_epi8(chunk, continuation));
            continuations = _mm_add_epi64(continuations, _mm_sad_epu8(ones, zero));
            count += 16;
            c->p += 16;
        }
        count -= _mm_cvtsi128_si32(continuations) + _mm_cvtsi128_si32(_mm_srli_si128(continuations, 8));
#endif
        while (c->p < c->end && *c->p != '"' && *c->p != '\\') {
            count += (*c->p & 0xC0) != 0x80;
            c->p++;
        }
        if (out != NULL && c->p > start && buffer_put(out, start, c->p - start) < 0) return STOP_ERROR;
        if (c->p >= c->end) return STOP_OTHER;
        if (*c->p == '"') {
            c->p++;
            break;
        }
        /* an escape */
        if (c->end - c->p < 2) return STOP_OTHER;
        unsigned char escaped = c->p[1];
        unsigned int code;
        c->p += 2;
        switch (escaped) {
        case '"': code = '"'; break;
        case '\\': code = '\\'; break;
        case 'n': code = '\n'; break;
        case 'r': code = '\r'; break;
        case 't': code = '\t'; break;
        case 'b': code = '\b'; break;
        case 'f': code = '\f'; break;
        case '/': code = '/'; break; /* raw JSON (a tool's input) may hold it as the model wrote it */
        case 'u': {
            if (c->end - c->p < 4) return STOP_OTHER;
            int digits[4];
            for (int i = 0; i < 4; i++) {
                digits[i] = hex_value(c->p[i]);
                if (digits[i] < 0) return STOP_OTHER;
            }
            code = (unsigned int)((digits[0] << 12) | (digits[1] << 8) | (digits[2] << 4) | digits[3]);
            c->p += 4;
            /* Go writes \u00XX, \u2028, \u2029 and \ufffd; a surrogate would need pairing: left to Python. */
            if (code >= 0xD800 && code <= 0xDFFF) return STOP_OTHER;
            break;
        }
        default:
            return STOP_OTHER;
        }
        count++;
        if (out != NULL && put_utf8(out, code) < 0) return STOP_ERROR;
    }
    if (chars != NULL) *chars = count;
    return 0;
}

/* An object key (never escaped in a record the scanner proved) and its colon. */
static int read_key(cursor *c, const unsigned char **key, Py_ssize_t *length) {
    if (take(c, '"') < 0) return STOP_OTHER;
    *key = c->p;
    while (c->p < c->end && *c->p != '"') {
        if (*c->p == '\\') return STOP_OTHER;
        c->p++;
    }
    *length = c->p - *key;
    if (take(c, '"') < 0 || take(c, ':') < 0) return STOP_OTHER;
    return 0;
}

static int key_is(const unsigned char *key, Py_ssize_t length, const char *name) {
    return (size_t)length == strlen(name) && memcmp(key, name, (size_t)length) == 0;
}

/* The next key of an object being walked (its colon read): 1, or 0 once its closing brace is passed, or what stops
 * the walk. ``*started`` is 0 before the object's opening brace; the caller reads each key's value in between. */
static int next_key(cursor *c, int *started, const unsigned char **key, Py_ssize_t *length) {
    if (!*started) {
        if (take(c, '{') < 0) return STOP_OTHER;
        *started = 1;
    } else if (peek(c, ',')) {
        c->p++;
    }
    if (peek(c, '}')) {
        c->p++;
        return 0;
    }
    int status = read_key(c, key, length);
    return status < 0 ? status : 1;
}

static int read_uint64(cursor *c, uint64_t *value) {
    if (c->p >= c->end || *c->p < '0' || *c->p > '9') return STOP_OTHER;
    uint64_t n = 0;
    while (c->p < c->end && *c->p >= '0' && *c->p <= '9') {
        unsigned digit = (unsigned)(*c->p - '0');
        if (n > (UINT64_MAX - digit) / 10) return STOP_OTHER;
        n = n * 10 + digit;
        c->p++;
    }
    *value = n;
    return 0;
}

static int read_int64(cursor *c, int64_t *value) {
    int negative = peek(c, '-');
    if (negative) c->p++;
    uint64_t magnitude;
    if (read_uint64(c, &magnitude) < 0) return STOP_OTHER;
    if (negative ? magnitude > (uint64_t)INT64_MAX + 1 : magnitude > (uint64_t)INT64_MAX) return STOP_OTHER;
    *value = negative ? (int64_t)(0 - magnitude) : (int64_t)magnitude;
    return 0;
}

static int read_bool(cursor *c, int *value) {
    if (take_word(c, "true") == 0) {
        *value = 1;
        return 0;
    }
    if (take_word(c, "false") == 0) {
        *value = 0;
        return 0;
    }
    return STOP_OTHER;
}

/* Any value, skipped (compact JSON: the scanner proved it); nesting deeper than ``depth`` is left to Python. */
static int skip_value(cursor *c, int depth) {
    if (depth > 200 || c->p >= c->end) return STOP_OTHER;
    unsigned char ch = *c->p;
    if (ch == '"') return read_string(c, NULL, NULL);
    if (ch == '{' || ch == '[') {
        unsigned char close = ch == '{' ? '}' : ']';
        c->p++;
        if (peek(c, close)) {
            c->p++;
            return 0;
        }
        for (;;) {
            if (ch == '{') {
                if (read_string(c, NULL, NULL) < 0 || take(c, ':') < 0) return STOP_OTHER;
            }
            int status = skip_value(c, depth + 1);
            if (status < 0) return status;
            if (peek(c, ',')) {
                c->p++;
                continue;
            }
            return take(c, close);
        }
    }
    /* a number, true, false or null */
    while (c->p < c->end && *c->p != ',' && *c->p != '}' && *c->p != ']') c->p++;
    return 0;
}

/* -- Go times ---------------------------------------------------------------------------------------------------- */

typedef struct {
    int dated;
    int64_t seconds; /* since 1970, UTC */
    int32_t nanos;
    const unsigned char *text; /* the time as written, for the caller's run row */
    Py_ssize_t text_length;
} moment;

/* A record dated before the dated record before it: a times_out_of_order finding (the Python fold words it). */
typedef struct {
    uint64_t seq, before_seq;
    moment time, before;
} backstep;

static int64_t days_from_civil(int64_t y, unsigned m, unsigned d) {
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    unsigned yoe = (unsigned)(y - era * 400);
    unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + (int64_t)doe - 719468;
}

static int digits_at(const unsigned char *p, int n, int *value) {
    int v = 0;
    for (int i = 0; i < n; i++) {
        if (p[i] < '0' || p[i] > '9') return -1;
        v = v * 10 + (p[i] - '0');
    }
    *value = v;
    return 0;
}

/* A time string in Go's RFC 3339 form (the scanner proved the form; the values are checked again here). */
static int read_time(cursor *c, moment *out) {
    if (take(c, '"') < 0) return STOP_OTHER;
    const unsigned char *s = c->p;
    while (c->p < c->end && *c->p != '"') {
        if (*c->p == '\\') return STOP_OTHER;
        c->p++;
    }
    const unsigned char *e = c->p;
    if (take(c, '"') < 0) return STOP_OTHER;
    Py_ssize_t n = e - s;
    out->text = s;
    out->text_length = n;
    out->dated = 0;
    if (n == 0) return 0;
    int year, month, day, hour, minute, second;
    if (n < 20 || digits_at(s, 4, &year) || s[4] != '-' || digits_at(s + 5, 2, &month) || s[7] != '-' ||
        digits_at(s + 8, 2, &day) || s[10] != 'T' || digits_at(s + 11, 2, &hour) || s[13] != ':' ||
        digits_at(s + 14, 2, &minute) || s[16] != ':' || digits_at(s + 17, 2, &second))
        return STOP_OTHER;
    /* Python holds no year 0 (its readers answer None there): such a journal is left to them. */
    if (year < 1 || month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 59)
        return STOP_OTHER;
    static const int month_days[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    int leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    if (day > month_days[month - 1] || (month == 2 && day == 29 && !leap)) return STOP_OTHER;
    const unsigned char *p = s + 19;
    int32_t nanos = 0;
    if (p < e && *p == '.') {
        p++;
        int digits = 0;
        while (p < e && *p >= '0' && *p <= '9') {
            if (++digits > 9) return STOP_OTHER;
            nanos = nanos * 10 + (*p - '0');
            p++;
        }
        if (digits == 0) return STOP_OTHER;
        for (int i = digits; i < 9; i++) nanos *= 10;
    }
    int64_t offset = 0;
    if (p < e && *p == 'Z') {
        p++;
    } else if (p < e && (*p == '+' || *p == '-')) {
        int oh, om;
        if (e - p != 6 || digits_at(p + 1, 2, &oh) || p[3] != ':' || digits_at(p + 4, 2, &om) || oh > 23 ||
            om > 59)
            return STOP_OTHER;
        offset = (int64_t)(oh * 60 + om) * 60;
        if (*p == '-') offset = -offset;
        p = e;
    } else {
        return STOP_OTHER;
    }
    if (p != e) return STOP_OTHER;
    out->seconds = days_from_civil(year, (unsigned)month, (unsigned)day) * 86400 + hour * 3600 + minute * 60 +
                   second - offset;
    out->nanos = nanos;
    out->dated = 1;
    /* A time no column holds (its offset moves it out of years 1-9999 UTC) is null with a finding: Python's rule. */
    int64_t micros = out->seconds * 1000000 + nanos / 1000;
    if (micros < MIN_MICROS || micros > MAX_MICROS) return STOP_OTHER;
    return 0;
}

/* go_time(): the instant in microseconds (read_time took only times a column holds), None when undated. */
static PyObject *micros_or_none(const moment *m) {
    if (!m->dated) Py_RETURN_NONE;
    return PyLong_FromLongLong(m->seconds * 1000000 + m->nanos / 1000);
}

/* -- the walk ---------------------------------------------------------------------------------------------------- */

/* The columns the walk appends to, in this order (the caller's TablesBuilder names them). */
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

/* What a message's blocks add up to, for its row. */
typedef struct {
    bytes_buffer *text;
    int *text_blocks;
    Py_ssize_t *thinking;
    int64_t *uses, *results, *providers;
} block_sums;

static int add_call(walk *w, cursor *c, uint64_t seq, const moment *time) {
    if (w->call_count == w->call_capacity) {
        Py_ssize_t capacity = w->call_capacity ? w->call_capacity * 2 : 16;
        call *calls = PyMem_RawRealloc(w->calls, (size_t)capacity * sizeof(call));
        if (calls == NULL) return STOP_ERROR;
        w->calls = calls;
        w->call_capacity = capacity;
    }
    call *made = &w->calls[w->call_count];
    memset(made, 0, sizeof(*made));
    made->made_seq = seq;
    made->made = *time;
    const unsigned char *key;
    Py_ssize_t length;
    int started = 0, more;
    int seen_input = 0;
    while ((more = next_key(c, &started, &key, &length)) > 0) {
        int status = 0;
        if (key_is(key, length, "id")) {
            status = read_into_arena(w, c, &made->id, NULL);
        } else if (key_is(key, length, "name")) {
            status = read_into_arena(w, c, &made->name, NULL);
        } else if (key_is(key, length, "input")) {
            const unsigned char *start = c->p;
            status = skip_value(c, 0);
            made->input = start;
            made->input_length = c->p - start;
            seen_input = 1;
        } else {
            return STOP_OTHER;
        }
        if (status < 0) return status;
    }
    if (more < 0) return more;
    if (!seen_input) return STOP_OTHER;
    /* The same id twice in one turn: the reference pairs them by recency; left to it. */
    if (w->call_count - w->turn_first_call >= MAX_TURN_CALLS) return STOP_OTHER;
    for (Py_ssize_t i = w->turn_first_call; i < w->call_count; i++) {
        if (arena_equal(w, w->calls[i].id, made->id)) return STOP_OTHER;
    }
    w->call_count++;
    return 0;
}

/* A message's content array; ``calls`` is set for an assistant record, whose tool_use blocks are calls. */
static int read_blocks(walk *w, cursor *c, block_sums *sums, int calls, uint64_t seq, const moment *time) {
    if (take_word(c, "null") == 0) return 0;
    if (take(c, '[') < 0) return STOP_OTHER;
    while (!peek(c, ']')) {
        const unsigned char *key;
        Py_ssize_t length;
        int started = 0, more;
        int kinds = 0;
        while ((more = next_key(c, &started, &key, &length)) > 0) {
            int status = 0;
            /* A block with two kinds set reads differently to the reference's rows and its calls: left to it. */
            if (++kinds > 1) return STOP_OTHER;
            if (key_is(key, length, "text")) {
                if (take(c, '{') < 0) return STOP_OTHER;
                const unsigned char *inner;
                Py_ssize_t inner_length;
                if ((status = read_key(c, &inner, &inner_length)) < 0) return status;
                if (!key_is(inner, inner_length, "text")) return STOP_OTHER;
                if (*sums->text_blocks > 0 && buffer_put(sums->text, "\n", 1) < 0) return STOP_ERROR;
                (*sums->text_blocks)++;
                if ((status = read_string(c, sums->text, NULL)) < 0) return status;
                if (take(c, '}') < 0) return STOP_OTHER;
            } else if (key_is(key, length, "thinking")) {
                const unsigned char *inner;
                Py_ssize_t inner_length;
                int inner_started = 0, inner_more;
                while ((inner_more = next_key(c, &inner_started, &inner, &inner_length)) > 0) {
                    if (key_is(inner, inner_length, "text")) {
                        Py_ssize_t chars = 0;
                        if ((status = read_string(c, NULL, &chars)) < 0) return status;
                        *sums->thinking += chars;
                    } else if ((status = skip_value(c, 0)) < 0) {
                        return status;
                    }
                }
                if (inner_more < 0) return inner_more;
            } else if (key_is(key, length, "tool_use")) {
                (*sums->uses)++;
                if (calls) {
                    if ((status = add_call(w, c, seq, time)) < 0) return status;
                } else if ((status = skip_value(c, 0)) < 0) {
                    return status;
                }
            } else if (key_is(key, length, "tool_result")) {
                (*sums->results)++;
                if ((status = skip_value(c, 0)) < 0) return status;
            } else if (key_is(key, length, "provider")) {
                (*sums->providers)++;
                if ((status = skip_value(c, 0)) < 0) return status;
            } else {
                return STOP_OTHER;
            }
        }
        if (more < 0) return more;
        if (peek(c, ',')) c->p++;
    }
    c->p++;
    return 0;
}

/* ``{"role":"<role>","content":...}``: a message whose role must be ``role`` (another is left to Python). */
static int read_message(walk *w, cursor *c, const char *role, block_sums *sums, int calls, uint64_t seq,
                        const moment *time) {
    const unsigned char *key;
    Py_ssize_t length;
    int started = 0, more;
    int seen_content = 0;
    while ((more = next_key(c, &started, &key, &length)) > 0) {
        int status = 0;
        if (key_is(key, length, "role")) {
            if (take(c, '"') < 0 || take_word(c, role) < 0 || take(c, '"') < 0) return STOP_OTHER;
        } else if (key_is(key, length, "content")) {
            seen_content = 1;
            if ((status = read_blocks(w, c, sums, calls, seq, time)) < 0) return status;
        } else {
            return STOP_OTHER;
        }
    }
    if (more < 0) return more;
    return seen_content ? 0 : STOP_OTHER;
}

static int commit_turn(walk *w) {
    /* The assistant message, then the results gathered (one user message, which later users merge into). */
    int status = flush_user_message(w);
    if (status < 0) return status;
    if ((status = put_message(w, w->turn_seq, 0, "assistant", w->turn_text.data, w->turn_text.length,
                              w->turn_thinking, w->turn_uses, w->turn_results, w->turn_providers)) < 0)
        return status;
    if (w->turn_result_count > 0) {
        open_user_message(w, w->turn_first_result_seq);
        w->last.results = w->turn_result_count;
    }
    w->in_turn = 0;
    return 0;
}

/* Whether a call of the turn in flight has no result yet. */
static int turn_waits(const walk *w) {
    for (Py_ssize_t i = w->turn_first_call; i < w->call_count; i++) {
        if (!w->calls[i].answered) return 1;
    }
    return 0;
}

/* A turn closed by the record ``seq``: each call it left unanswered is an unanswered_call warning (``summary``). */
static int close_turn(walk *w, uint64_t seq) {
    if (!w->in_turn) return 0;
    for (Py_ssize_t i = w->turn_first_call; i < w->call_count; i++) {
        if (!w->calls[i].answered) w->calls[i].closed_by = seq;
    }
    return commit_turn(w);
}

/* A user or assistant record: a new turn. After a terminal, only once a claim has come (else a finding). */
static int new_turn_after_terminal(walk *w) {
    if (w->terminal_waits_claim) return STOP_OTHER;
    return 0;
}

static int gap(const moment *before, const moment *after, int *timed, int64_t *duration) {
    *timed = 0;
    if (!before->dated || !after->dated) return 0;
    /* Python reads year 0 as undated; read_time left such a journal already. */
    int64_t seconds = after->seconds - before->seconds;
    int64_t nanos = (int64_t)after->nanos - before->nanos;
    if (seconds < 0 || (seconds == 0 && nanos < 0)) return 0;
    /* beyond the duration column: left to Python, which nulls it with a finding (tables.columns.ValueFit) */
    if (seconds > INT64_MAX / 1000000000 - 1) return STOP_OTHER;
    *duration = seconds * 1000000000 + nanos;
    *timed = 1;
    return 0;
}

static int read_assistant(walk *w, cursor *c, uint64_t seq, const moment *time) {
    int status;
    if ((status = new_turn_after_terminal(w)) < 0) return status;
    if ((status = close_turn(w, seq)) < 0) return status;
    w->turn_first_call = w->call_count;
    w->turn_text.length = 0;
    w->turn_text_blocks = 0;
    w->turn_thinking = 0;
    w->turn_uses = w->turn_results = w->turn_providers = 0;
    w->turn_result_count = 0;
    int64_t iteration = 0, in = 0, out = 0, cache_read = 0, cache_create = 0, thinking = 0;
    text_ref stop = {w->arena.length, 0};
    int seen_message = 0;
    block_sums sums = {&w->turn_text, &w->turn_text_blocks, &w->turn_thinking, &w->turn_uses, &w->turn_results,
                       &w->turn_providers};
    const unsigned char *key;
    Py_ssize_t length;
    int started = 0, more;
    while ((more = next_key(c, &started, &key, &length)) > 0) {
        if (key_is(key, length, "iteration")) status = read_int64(c, &iteration);
        else if (key_is(key, length, "message")) {
            seen_message = 1;
            status = read_message(w, c, "assistant", &sums, 1, seq, time);
        } else if (key_is(key, length, "stop_reason")) status = read_into_arena(w, c, &stop, NULL);
        else if (key_is(key, length, "in_tokens")) status = read_int64(c, &in);
        else if (key_is(key, length, "out_tokens")) status = read_int64(c, &out);
        else if (key_is(key, length, "cache_read_tokens")) status = read_int64(c, &cache_read);
        else if (key_is(key, length, "cache_create_tokens")) status = read_int64(c, &cache_create);
        else if (key_is(key, length, "thinking_tokens")) status = read_int64(c, &thinking);
        else return STOP_OTHER;
        if (status < 0) return status;
    }
    if (more < 0) return more;
    if (!seen_message) return STOP_OTHER;
    w->in_turn = 1;
    w->turn_seq = seq;
    w->saw_assistant = 1;
    w->last_iteration = iteration;
    w->last_stop = stop;
    w->context_tokens = (uint64_t)in + (uint64_t)cache_read + (uint64_t)cache_create;
    w->counters[0] += 1;
    w->counters[4] += (uint64_t)in;
    w->counters[5] += (uint64_t)out;
    w->counters[6] += (uint64_t)cache_read;
    w->counters[7] += (uint64_t)cache_create;
    w->counters[8] += (uint64_t)thinking;
    w->segment_llm++;
    w->segment_in += (uint64_t)in;
    w->segment_out += (uint64_t)out;
    int base = M_COLUMNS + C_COLUMNS;
    if (put_uint(w, base + R_SEQ, seq) < 0 || put_int(w, base + R_ITERATION, iteration) < 0 ||
        put_micros(w, base + R_TIME, time) < 0 || put_arena_or_null(w, base + R_STOP_REASON, stop) < 0 ||
        put_int(w, base + R_IN, in) < 0 || put_int(w, base + R_OUT, out) < 0 ||
        put_int(w, base + R_CACHE_READ, cache_read) < 0 || put_int(w, base + R_CACHE_CREATE, cache_create) < 0 ||
        put_int(w, base + R_THINKING, thinking) < 0)
        return STOP_ERROR;
    return 0;
}

static int read_user(walk *w, cursor *c, uint64_t seq) {
    int status;
    if ((status = new_turn_after_terminal(w)) < 0) return status;
    if ((status = close_turn(w, seq)) < 0) return status;
    w->turns++;
    if (!w->last.open) {
        open_user_message(w, seq);
    }
    block_sums sums = {&w->text, &w->last.text_blocks, &w->last.thinking, &w->last.uses, &w->last.results,
                       &w->last.providers};
    if (take(c, '{') < 0) return STOP_OTHER;
    const unsigned char *key;
    Py_ssize_t length;
    if ((status = read_key(c, &key, &length)) < 0) return status;
    if (!key_is(key, length, "message")) return STOP_OTHER;
    moment undated = {0};
    if ((status = read_message(w, c, "user", &sums, 0, seq, &undated)) < 0) return status;
    return take(c, '}');
}

static call *turn_call(walk *w, text_ref id) {
    if (!w->in_turn) return NULL;
    for (Py_ssize_t i = w->turn_first_call; i < w->call_count; i++) {
        if (arena_equal(w, w->calls[i].id, id)) return &w->calls[i];
    }
    return NULL;
}

static int parse_kind(walk *w, text_ref token) {
    for (int i = 1; i < kind_token_count; i++) {
        if (arena_is(w, token, KIND_TOKENS[i])) return i;
    }
    return 0;
}

static int read_tool_result(walk *w, cursor *c, uint64_t seq, const moment *time, const moment *before) {
    if (!w->in_turn) return STOP_OTHER; /* result_outside_turn */
    text_ref id = {0, 0}, result_id = {0, 0}, kind = {0, 0};
    int remote = 0, dispatched = 0, is_error = 0, seen_result = 0;
    Py_ssize_t chars = 0;
    int status;
    const unsigned char *key;
    Py_ssize_t length;
    int started = 0, more;
    while ((more = next_key(c, &started, &key, &length)) > 0) {
        if (key_is(key, length, "tool_use_id")) status = read_into_arena(w, c, &id, NULL);
        else if (key_is(key, length, "result")) {
            seen_result = 1;
            const unsigned char *inner;
            Py_ssize_t inner_length;
            int inner_started = 0, inner_more;
            while ((inner_more = next_key(c, &inner_started, &inner, &inner_length)) > 0) {
                if (key_is(inner, inner_length, "tool_use_id")) status = read_into_arena(w, c, &result_id, NULL);
                else if (key_is(inner, inner_length, "content")) status = read_string(c, NULL, &chars);
                else if (key_is(inner, inner_length, "is_error")) status = read_bool(c, &is_error);
                else return STOP_OTHER;
                if (status < 0) return status;
            }
            status = inner_more;
        } else if (key_is(key, length, "remote")) status = read_bool(c, &remote);
        else if (key_is(key, length, "kind")) status = read_into_arena(w, c, &kind, NULL);
        else if (key_is(key, length, "dispatched")) status = read_bool(c, &dispatched);
        else return STOP_OTHER;
        if (status < 0) return status;
    }
    if (more < 0) return more;
    if (!seen_result || !arena_equal(w, id, result_id)) return STOP_OTHER; /* tool_use_id_mismatch */
    call *answered = turn_call(w, id);
    if (answered == NULL || answered->answered) return STOP_OTHER; /* unknown_call_result, duplicate_result */
    /* The newest fold's provider rule (kinds.provider_of). */
    int number;
    int ran;
    if (kind.length) {
        number = parse_kind(w, kind);
        ran = dispatched;
    } else if (remote) {
        number = kind_remote;
        ran = 1;
    } else {
        number = 0;
        ran = 0;
    }
    answered->answered = 1;
    answered->answered_seq = seq;
    answered->answered_at = *time;
    answered->is_error = is_error;
    answered->remote = remote;
    answered->kind = number;
    answered->dispatched = ran;
    answered->result_chars = chars;
    if (!answered->deferred && (status = gap(before, time, &answered->timed, &answered->duration)) < 0)
        return status;
    if (w->turn_result_count++ == 0) w->turn_first_result_seq = seq;
    w->counters[1] += 1;
    w->by_kind[number] += 1;
    w->by_kind_seen[number] = 1;
    if (ran && number == kind_remote) w->counters[2] += 1;
    if (ran && number == kind_mcp) w->counters[3] += 1;
    w->segment_tools++;
    w->results++;
    if (!kind.length) w->kindless++;
    return 0;
}

static int read_deferred(walk *w, cursor *c, const moment *time, const moment *before) {
    if (!w->in_turn) return STOP_OTHER; /* result_outside_turn */
    text_ref id = {0, 0}, note = {0, 0}, handle = {0, 0};
    int status;
    const unsigned char *key;
    Py_ssize_t length;
    int started = 0, more;
    while ((more = next_key(c, &started, &key, &length)) > 0) {
        if (key_is(key, length, "tool_use_id")) status = read_into_arena(w, c, &id, NULL);
        else if (key_is(key, length, "note")) status = read_into_arena(w, c, &note, NULL);
        else if (key_is(key, length, "handle")) status = read_into_arena(w, c, &handle, NULL);
        else if (key_is(key, length, "tool_name") || key_is(key, length, "kind") ||
                 key_is(key, length, "dispatched"))
            status = skip_value(c, 0);
        else return STOP_OTHER;
        if (status < 0) return status;
    }
    if (more < 0) return more;
    call *waiting = turn_call(w, id);
    /* unknown_deferral; a deferral of an answered call or a second one the reference keeps apart: left to it. */
    if (waiting == NULL || waiting->answered || waiting->deferred) return STOP_OTHER;
    waiting->deferred = 1;
    waiting->note = note;
    waiting->handle = handle;
    return gap(before, time, &waiting->timed, &waiting->duration);
}

static int read_single_string(walk *w, cursor *c, const char *name, text_ref *value, const char *also) {
    int status;
    const unsigned char *key;
    Py_ssize_t length;
    int started = 0, more;
    int seen = 0;
    while ((more = next_key(c, &started, &key, &length)) > 0) {
        if (key_is(key, length, name)) {
            seen = 1;
            status = read_into_arena(w, c, value, NULL);
        } else if (also != NULL && key_is(key, length, also)) {
            status = skip_value(c, 0);
        } else {
            return STOP_OTHER;
        }
        if (status < 0) return status;
    }
    if (more < 0) return more;
    return seen ? 0 : STOP_OTHER;
}

static int list_add(text_list *list, text_ref value) { return text_list_add(list, value) < 0 ? STOP_ERROR : 0; }

static int read_call_approval(walk *w, cursor *c) {
    text_ref id;
    int status = read_single_string(w, c, "tool_use_id", &id, "tool_name");
    if (status < 0) return status;
    if ((status = list_add(&w->call_approvals, id)) < 0) return status;
    /* The most recent call ever made with that id (facts.RunFacts): searched back, within a budget. */
    for (Py_ssize_t i = w->call_count - 1; i >= 0; i--) {
        if (--w->search_budget < 0) return STOP_OTHER;
        if (arena_equal(w, w->calls[i].id, id)) {
            w->calls[i].approved = 1;
            break;
        }
    }
    return 0;
}

static int read_memory(walk *w, cursor *c) {
    int status;
    if (take(c, '{') < 0) return STOP_OTHER;
    const unsigned char *key;
    Py_ssize_t length;
    if ((status = read_key(c, &key, &length)) < 0) return status;
    if (!key_is(key, length, "revisions")) return STOP_OTHER;
    w->memory_keys.count = 0;
    if (take_word(c, "null") != 0) {
        if (take(c, '{') < 0) return STOP_OTHER;
        while (!peek(c, '}')) {
            text_ref name;
            Py_ssize_t chars = 0;
            name.offset = w->arena.length;
            if ((status = read_string(c, &w->arena, &chars)) < 0) return status;
            name.length = w->arena.length - name.offset;
            uint64_t revision;
            if (take(c, ':') < 0 || read_uint64(c, &revision) < 0) return STOP_OTHER;
            /* What the published schemas refuse is a finding of the reference's (schema_violation). */
            if (chars < 1 || chars > 200 || revision < 1) return STOP_OTHER;
            if ((status = list_add(&w->memory_keys, name)) < 0) return status;
            if (peek(c, ',')) c->p++;
        }
        c->p++;
    }
    return take(c, '}');
}

/* The meta payload: only ``created`` is read (the caller decoded the rest, the prompt among it, from the line). */
static int read_meta(walk *w, cursor *c) {
    int status;
    const unsigned char *key;
    Py_ssize_t length;
    int started = 0, more;
    while ((more = next_key(c, &started, &key, &length)) > 0) {
        status = key_is(key, length, "created") ? read_time(c, &w->created) : skip_value(c, 0);
        if (status < 0) return status;
    }
    return more;
}

static int read_terminal(walk *w, cursor *c, const moment *time) {
    text_ref reason = {0, 0}, message = {0, 0};
    int status;
    const unsigned char *key;
    Py_ssize_t length;
    int started = 0, more;
    while ((more = next_key(c, &started, &key, &length)) > 0) {
        if (key_is(key, length, "reason")) status = read_into_arena(w, c, &reason, NULL);
        else if (key_is(key, length, "message")) status = read_into_arena(w, c, &message, NULL);
        else if (key_is(key, length, "summary")) status = skip_value(c, 0);
        else return STOP_OTHER;
        if (status < 0) return status;
    }
    if (more < 0) return more;
    int known = 0;
    for (int i = 0; i < terminal_reason_count; i++) {
        if (arena_is(w, reason, TERMINAL_REASONS[i])) known = 1;
    }
    if (!known) return STOP_OTHER; /* unknown_terminal_reason */
    w->terminal_set = 1;
    w->terminal_reason = reason;
    w->terminal_message = message;
    w->reopened = 0;
    w->ended = *time;
    w->call_approvals.count = 0;
    w->terminal_waits_claim = 1;
    w->any_terminal = 1;
    w->turn_after_terminal = 0;
    w->segment_terminal = 1;
    w->segment_reason = reason;
    w->segment_message = message;
    return 0;
}

static int end_segment(walk *w, const char *ending, uint64_t last_seq, const moment *last_time) {
    int base = M_COLUMNS + C_COLUMNS + R_COLUMNS;
    int claimed = w->segment_claimed, ended = w->segment_terminal;
    if (put_micros(w, base + S_STARTED_AT, &w->segment_started) < 0 ||
        put_micros(w, base + S_ENDED_AT, last_time) < 0 || put_int(w, base + S_SEGMENT, w->segment_index) < 0 ||
        put_uint(w, base + S_FIRST_SEQ, w->segment_first_seq) < 0 || put_uint(w, base + S_LAST_SEQ, last_seq) < 0 ||
        (claimed ? put_arena(w, base + S_CLAIMED_BY, w->segment_claimed_by) : put_null(w, base + S_CLAIMED_BY)) < 0 ||
        (claimed ? put_micros(w, base + S_CLAIMED_AT, &w->segment_claimed_at) : put_null(w, base + S_CLAIMED_AT)) < 0 ||
        (ended ? put_arena(w, base + S_ENDING, w->segment_reason) : put_word(w, base + S_ENDING, ending)) < 0 ||
        (ended ? put_arena_or_null(w, base + S_TERMINAL_MESSAGE, w->segment_message)
               : put_null(w, base + S_TERMINAL_MESSAGE)) < 0 ||
        put_int(w, base + S_LLM_CALLS, w->segment_llm) < 0 || put_int(w, base + S_TOOL_CALLS, w->segment_tools) < 0 ||
        put_int(w, base + S_IN, (int64_t)w->segment_in) < 0 || put_int(w, base + S_OUT, (int64_t)w->segment_out) < 0)
        return STOP_ERROR;
    w->segment_index++;
    return 0;
}

static void start_segment(walk *w, uint64_t seq, const moment *time) {
    w->segment_first_seq = seq;
    w->segment_started = *time;
    w->segment_claimed = 0;
    w->segment_terminal = 0;
    w->segment_llm = w->segment_tools = 0;
    w->segment_in = w->segment_out = 0;
}

static int read_claim(walk *w, cursor *c, uint64_t seq, const moment *time, uint64_t last_seq,
                      const moment *last_time) {
    int status = end_segment(w, "crashed", last_seq, last_time);
    if (status < 0) return status;
    start_segment(w, seq, time);
    w->segment_claimed = 1;
    w->resumes++;
    w->terminal_waits_claim = 0;
    const unsigned char *key;
    Py_ssize_t length;
    int started = 0, more;
    int seen_at = 0;
    while ((more = next_key(c, &started, &key, &length)) > 0) {
        if (key_is(key, length, "by")) status = read_into_arena(w, c, &w->segment_claimed_by, NULL);
        else if (key_is(key, length, "claimed")) {
            seen_at = 1;
            status = read_time(c, &w->segment_claimed_at);
        } else return STOP_OTHER;
        if (status < 0) return status;
    }
    if (more < 0) return more;
    return seen_at ? 0 : STOP_OTHER;
}

/* One record line: its envelope, then its one payload (a second, or none, is a finding: left to Python). */
static int read_record(walk *w, cursor *c, int kind, int index, uint64_t *seq_out, moment *time, uint64_t last_seq,
                       const moment *before) {
    int status;
    /* A kind the Python declarations hold and this walk does not fold (a newer generation's): given back. */
    if (kind < -1 || kind >= K_COUNT) return STOP_OTHER;
    uint64_t seq = 0;
    int payloads = 0, optional = 0;
    time->dated = 0;
    time->text = NULL;
    time->text_length = 0;
    const unsigned char *key;
    Py_ssize_t length;
    int started = 0, more;
    while ((more = next_key(c, &started, &key, &length)) > 0) {
        if (key_is(key, length, "seq")) {
            status = read_uint64(c, &seq);
            if (status == 0 && index > 0) {
                if (seq < 1 || seq <= last_seq) return STOP_OTHER; /* schema_violation, seq_not_increasing */
                /* Anything after a terminal reopens the run (the reference checks before the record applies). */
                if (w->terminal_set && kind != K_TERMINAL) w->reopened = 1;
            }
        } else if (key_is(key, length, "protocol")) {
            status = read_string(c, NULL, NULL);
        } else if (key_is(key, length, "time")) {
            status = read_time(c, time);
        } else if (key_is(key, length, "optional")) {
            status = read_bool(c, &optional);
        } else {
            if (++payloads > 1) return STOP_OTHER; /* schema_violation: two payloads */
            if (kind < 0) {
                status = skip_value(c, 0);
            } else {
                if (!key_is(key, length, KIND_NAMES[kind])) return STOP_OTHER; /* missing_payload */
                switch (kind) {
                case K_META: status = index == 0 ? read_meta(w, c) : STOP_OTHER; break; /* duplicate_meta */
                case K_ASSISTANT: status = read_assistant(w, c, seq, time); break;
                case K_USER: status = read_user(w, c, seq); break;
                case K_TOOL_RESULT: status = read_tool_result(w, c, seq, time, before); break;
                case K_DEFERRED: status = read_deferred(w, c, time, before); break;
                case K_DECISION: {
                    text_ref tool;
                    status = read_single_string(w, c, "tool", &tool, NULL);
                    if (status == 0) {
                        status = list_add(&w->approvals, tool);
                    }
                    break;
                }
                case K_CALL_APPROVAL: status = read_call_approval(w, c); break;
                case K_MEMORY: status = read_memory(w, c); break;
                case K_TERMINAL: status = read_terminal(w, c, time); break;
                case K_CLAIM: status = read_claim(w, c, seq, time, last_seq, before); break;
                default: status = STOP_OTHER;
                }
            }
        }
        if (status < 0) return status;
    }
    if (more < 0) return more;
    if (c->p != c->end) return STOP_OTHER;
    if (kind < 0 && !optional) return STOP_OTHER; /* unknown_protocol */
    if (kind >= 0 && payloads == 0) return STOP_OTHER; /* missing_payload */
    if (w->any_terminal && (kind == K_USER || kind == K_ASSISTANT)) w->turn_after_terminal = 1;
    if (!time->dated && time->text_length == 0) w->undated++;
    *seq_out = seq;
    return 0;
}

/* Whether ``length`` bytes at ``p`` are valid UTF-8 (a tool's input is kept as the line holds it). */
static int valid_utf8(const unsigned char *p, Py_ssize_t length) {
    const unsigned char *end = p + length;
    while (p < end) {
        unsigned char lead = *p;
        int n = lead < 0x80 ? 1 : lead >= 0xC2 && lead <= 0xDF ? 2 : lead >= 0xE0 && lead <= 0xEF ? 3
                : lead >= 0xF0 && lead <= 0xF4 ? 4 : 0;
        if (n == 0 || end - p < n) return 0;
        for (int i = 1; i < n; i++) {
            if ((p[i] & 0xC0) != 0x80) return 0;
        }
        if ((lead == 0xE0 && p[1] < 0xA0) || (lead == 0xED && p[1] >= 0xA0) || (lead == 0xF0 && p[1] < 0x90) ||
            (lead == 0xF4 && p[1] >= 0x90))
            return 0;
        p += n;
    }
    return 1;
}

static int put_calls(walk *w) {
    int b = M_COLUMNS;
    for (Py_ssize_t i = 0; i < w->call_count; i++) {
        call *k = &w->calls[i];
        int answered = k->answered;
        /* The reference decodes an input that is not UTF-8 with replacement characters: left to it. */
        if (!valid_utf8(k->input, k->input_length)) return STOP_OTHER;
        if (put_arena(w, b + C_ID, k->id) < 0 || put_arena(w, b + C_NAME, k->name) < 0 ||
            put_text(w, b + C_INPUT, (const char *)k->input, k->input_length) < 0 ||
            put_uint(w, b + C_CALL_SEQ, k->made_seq) < 0 ||
            (answered ? put_uint(w, b + C_RESULT_SEQ, k->answered_seq) : put_null(w, b + C_RESULT_SEQ)) < 0 ||
            (answered ? put_bool(w, b + C_IS_ERROR, k->is_error) : put_null(w, b + C_IS_ERROR)) < 0 ||
            (answered ? put_bool(w, b + C_REMOTE, k->remote) : put_null(w, b + C_REMOTE)) < 0 ||
            (answered ? put_word(w, b + C_KIND, KIND_TOKENS[k->kind]) : put_null(w, b + C_KIND)) < 0 ||
            (answered ? put_bool(w, b + C_DISPATCHED, k->dispatched) : put_null(w, b + C_DISPATCHED)) < 0 ||
            put_micros(w, b + C_MADE_AT, &k->made) < 0 ||
            (answered ? put_micros(w, b + C_ANSWERED_AT, &k->answered_at) : put_null(w, b + C_ANSWERED_AT)) < 0 ||
            (k->timed ? put_int(w, b + C_DURATION, k->duration) : put_null(w, b + C_DURATION)) < 0 ||
            put_bool(w, b + C_TIMED, k->timed) < 0 || put_bool(w, b + C_DEFERRED, k->deferred) < 0 ||
            (k->deferred ? put_arena_or_null(w, b + C_NOTE, k->note) : put_null(w, b + C_NOTE)) < 0 ||
            (k->deferred ? put_arena_or_null(w, b + C_HANDLE, k->handle) : put_null(w, b + C_HANDLE)) < 0 ||
            put_bool(w, b + C_APPROVED, k->approved) < 0 ||
            (answered ? put_int(w, b + C_RESULT_CHARS, k->result_chars) : put_null(w, b + C_RESULT_CHARS)) < 0)
            return STOP_ERROR;
    }
    return 0;
}

static int is_zero_time(const moment *m) {
    static const char zero[] = "0001-01-01T00:00:00Z";
    return m->text_length == (Py_ssize_t)(sizeof(zero) - 1) && memcmp(m->text, zero, sizeof(zero) - 1) == 0;
}

static PyObject *time_text(const moment *m) {
    if (m->text == NULL) return PyUnicode_FromStringAndSize("", 0);
    return PyUnicode_DecodeUTF8((const char *)m->text, m->text_length, "strict");
}

static int dated_before(const moment *a, const moment *b) {
    return a->seconds < b->seconds || (a->seconds == b->seconds && a->nanos < b->nanos);
}

static int add_backstep(walk *w, uint64_t seq, const moment *time) {
    if (w->backstep_count == w->backstep_capacity) {
        Py_ssize_t capacity = w->backstep_capacity ? w->backstep_capacity * 2 : 4;
        backstep *items = PyMem_RawRealloc(w->backsteps, (size_t)capacity * sizeof(backstep));
        if (items == NULL) return -1;
        w->backsteps = items;
        w->backstep_capacity = capacity;
    }
    w->backsteps[w->backstep_count++] = (backstep){seq, w->last_dated_seq, *time, w->last_dated};
    return 0;
}

/* [(seq, its time, the seq of the dated record before, that record's time)] for each backstep, in journal order. */
static PyObject *backstep_list(const walk *w) {
    PyObject *made = PyList_New(w->backstep_count);
    if (made == NULL) return NULL;
    for (Py_ssize_t i = 0; i < w->backstep_count; i++) {
        const backstep *step = &w->backsteps[i];
        PyObject *item = Py_BuildValue("(KNKN)", (unsigned long long)step->seq, time_text(&step->time),
                                       (unsigned long long)step->before_seq, time_text(&step->before));
        if (item == NULL) {
            Py_DECREF(made);
            return NULL;
        }
        PyList_SET_ITEM(made, i, item);
    }
    return made;
}

/* [(the seq of its turn, its id, its name, the seq that closed the turn)] for each call a turn was closed without
 * answering, in journal order: the reference's unanswered_call warnings. */
static PyObject *unanswered_list(walk *w) {
    PyObject *made = PyList_New(0);
    if (made == NULL) return NULL;
    for (Py_ssize_t i = 0; i < w->call_count; i++) {
        const call *k = &w->calls[i];
        if (!k->closed_by) continue;
        PyObject *item = Py_BuildValue("(KNNK)", (unsigned long long)k->made_seq, arena_string(w, k->id),
                                       arena_string(w, k->name), (unsigned long long)k->closed_by);
        if (item == NULL || PyList_Append(made, item) < 0) {
            Py_XDECREF(item);
            Py_DECREF(made);
            return NULL;
        }
        Py_DECREF(item);
    }
    return made;
}

static PyObject *python_list(walk *w, const text_list *list) {
    PyObject *made = PyList_New(list->count);
    if (made == NULL) return NULL;
    for (Py_ssize_t i = 0; i < list->count; i++) {
        PyObject *text = arena_string(w, list->items[i]);
        if (text == NULL) {
            Py_DECREF(made);
            return NULL;
        }
        PyList_SET_ITEM(made, i, text);
    }
    return made;
}

/* One journal's lines, and what its walk leaves for the summary. */
typedef struct {
    const unsigned char *bytes;
    Py_ssize_t length;
    const int64_t *starts;
    const int8_t *kinds;
    Py_ssize_t count;
    const char *prompt;
    Py_ssize_t prompt_length;
    uint64_t last_seq;
    int ends_with_user;
} journal_walk;

/* The runs row's part of the walk, as a tuple (folding.native.NativeRun names the fields). */
static PyObject *summary(walk *w, const journal_walk *journal) {
    Py_ssize_t pending_calls = 0, open_deferrals = 0, ended_calls = 0, untimed = 0;
    int any_undeferred = 0;
    for (Py_ssize_t i = 0; i < w->call_count; i++) {
        call *k = &w->calls[i];
        if (k->answered || k->deferred) {
            ended_calls++;
            untimed += !k->timed;
        }
    }
    const char *waiting_for = NULL;
    if (w->in_turn) {
        for (Py_ssize_t i = w->turn_first_call; i < w->call_count; i++) {
            call *k = &w->calls[i];
            if (!k->answered) {
                pending_calls++;
                if (k->deferred) open_deferrals++;
                else any_undeferred = 1;
            }
        }
        waiting_for = any_undeferred ? "tools" : "answer";
    } else if (journal->ends_with_user) {
        waiting_for = "model";
    }
    PyObject *by_kind = PyList_New(0);
    if (by_kind == NULL) return NULL;
    for (int i = 0; i < kind_token_count; i++) {
        if (!w->by_kind_seen[i]) continue;
        PyObject *pair = Py_BuildValue("(sL)", KIND_TOKENS[i], (long long)w->by_kind[i]);
        if (pair == NULL || PyList_Append(by_kind, pair) < 0) {
            Py_XDECREF(pair);
            Py_DECREF(by_kind);
            return NULL;
        }
        Py_DECREF(pair);
    }
    PyObject *approvals = python_list(w, &w->approvals);
    PyObject *call_approvals = python_list(w, &w->call_approvals);
    PyObject *memory_keys = python_list(w, &w->memory_keys);
    PyObject *backsteps = backstep_list(w);
    PyObject *unanswered = unanswered_list(w);
    /* (terminal seq, seq, kind, claimed by or None) of the first record after the last terminal, else None. */
    PyObject *after = Py_NewRef(Py_None);
    if (w->terminal_set && w->after_set) {
        PyObject *by = w->after_claimed ? arena_string(w, w->after_by) : Py_NewRef(Py_None);
        const char *kind = w->after_kind >= 0 && w->after_kind < K_COUNT ? KIND_NAMES[w->after_kind] : "unknown";
        Py_DECREF(after);
        after = by == NULL ? NULL
                           : Py_BuildValue("(KKsN)", (unsigned long long)w->last_terminal_seq,
                                           (unsigned long long)w->after_seq, kind, by);
    }
    PyObject *terminal_reason = w->terminal_set ? arena_string(w, w->terminal_reason) : Py_NewRef(Py_None);
    PyObject *terminal_message = w->terminal_set ? arena_string_or_none(w, w->terminal_message) : Py_NewRef(Py_None);
    PyObject *last_stop = w->saw_assistant ? arena_string_or_none(w, w->last_stop) : Py_NewRef(Py_None);
    /* The runtime's Ended is Go's zero time for an undated terminal or a reopened run: no value in the column. */
    PyObject *ended =
        w->terminal_set && !w->reopened && !is_zero_time(&w->ended) ? micros_or_none(&w->ended) : Py_NewRef(Py_None);
    PyObject *created = micros_or_none(&w->created);
    PyObject *updated = micros_or_none(&w->last_time);
    PyObject *wall_clock = w->wall_timed ? PyLong_FromLongLong(w->wall_clock) : Py_NewRef(Py_None);
    PyObject *result = NULL;
    if (approvals && call_approvals && memory_keys && backsteps && unanswered && after && terminal_reason &&
        terminal_message && last_stop && ended && created && updated && wall_clock) {
        result = Py_BuildValue(
            "(nnnnOOOOLL(LLLLLLLLL)OOLznnOOOKLONNnnnLLOOOOOO)", (Py_ssize_t)w->message_index, (Py_ssize_t)w->call_count,
            journal->count,
            (Py_ssize_t)w->segment_index, terminal_reason, terminal_message, w->reopened ? Py_True : Py_False, ended,
            (long long)(int64_t)w->turns, (long long)(int64_t)w->context_tokens, (long long)(int64_t)w->counters[0],
            (long long)(int64_t)w->counters[1], (long long)(int64_t)w->counters[2],
            (long long)(int64_t)w->counters[3], (long long)(int64_t)w->counters[4],
            (long long)(int64_t)w->counters[5], (long long)(int64_t)w->counters[6],
            (long long)(int64_t)w->counters[7], (long long)(int64_t)w->counters[8], by_kind, last_stop,
            w->saw_assistant ? (long long)(int64_t)((uint64_t)w->last_iteration + 1) : 0LL, waiting_for,
            pending_calls, open_deferrals, approvals, call_approvals, memory_keys, (unsigned long long)journal->last_seq,
            (long long)w->resumes, (w->any_terminal && w->turn_after_terminal) ? Py_True : Py_False,
            time_text(&w->last_time), time_text(&w->last_dated), (Py_ssize_t)w->undated, ended_calls, untimed,
            (long long)w->results, (long long)w->kindless, backsteps, unanswered, after, created, updated, wall_clock);
    }
    Py_DECREF(by_kind);
    Py_XDECREF(approvals);
    Py_XDECREF(call_approvals);
    Py_XDECREF(memory_keys);
    Py_XDECREF(backsteps);
    Py_XDECREF(unanswered);
    Py_XDECREF(after);
    Py_XDECREF(terminal_reason);
    Py_XDECREF(terminal_message);
    Py_XDECREF(last_stop);
    Py_XDECREF(created);
    Py_XDECREF(updated);
    Py_XDECREF(wall_clock);
    Py_XDECREF(ended);
    return result;
}

/* A thread's buffers from its last walk, lent to its next one: a load walks thousands of small journals, and
 * allocating each journal's hundred-odd column buffers afresh cost about as much as walking it. A buffer that grew
 * past SPARE_KEPT is freed instead, so what a thread keeps stays small whatever journal it walked last. */
#define SPARE_KEPT (64 * 1024)
#define SPARE_BUFFERS (ALL_COLUMNS * 3 + 3)
static _Thread_local bytes_buffer spare[SPARE_BUFFERS];

/* Each of the walk's growable buffers, in one order for lending and giving back. */
static bytes_buffer *walk_buffer(walk *w, int i) {
    if (i < ALL_COLUMNS * 3) {
        column *c = &w->columns[i / 3];
        return i % 3 == 0 ? &c->values : i % 3 == 1 ? &c->valid : &c->data;
    }
    return i == ALL_COLUMNS * 3 ? &w->arena : i == ALL_COLUMNS * 3 + 1 ? &w->text : &w->turn_text;
}

static void walk_borrow(walk *w) {
    for (int i = 0; i < SPARE_BUFFERS; i++) {
        *walk_buffer(w, i) = spare[i];
        spare[i] = (bytes_buffer){0};
    }
}

static void walk_free(walk *w) {
    for (int i = 0; i < SPARE_BUFFERS; i++) {
        bytes_buffer *b = walk_buffer(w, i);
        if (b->capacity <= SPARE_KEPT && spare[i].data == NULL) {
            spare[i] = (bytes_buffer){b->data, 0, b->capacity};
        } else {
            PyMem_RawFree(b->data);
        }
    }
    PyMem_RawFree(w->calls);
    PyMem_RawFree(w->approvals.items);
    PyMem_RawFree(w->call_approvals.items);
    PyMem_RawFree(w->memory_keys.items);
    PyMem_RawFree(w->backsteps);
}

/* The caller's buffers of one column: (values, valid, data), bytearrays, ``data`` None but for text. */
typedef struct {
    PyObject *values, *valid, *data;
} target;

static int append_bytes(PyObject *array, const void *bytes, Py_ssize_t length) {
    Py_ssize_t size = PyByteArray_GET_SIZE(array);
    if (length == 0) return 0;
    if (PyByteArray_Resize(array, size + length) < 0) return -1;
    memcpy(PyByteArray_AS_STRING(array) + size, bytes, (size_t)length);
    return 0;
}

/* Append every column's rows to the caller's bytearrays (text offsets moved past the rows already there). On a
 * failure (memory), every bytearray is cut back to its size before. */
static int commit_columns(walk *w, const target *targets) {
    Py_ssize_t sizes[ALL_COLUMNS][3];
    for (int i = 0; i < ALL_COLUMNS; i++) {
        sizes[i][0] = PyByteArray_GET_SIZE(targets[i].values);
        sizes[i][1] = PyByteArray_GET_SIZE(targets[i].valid);
        sizes[i][2] = targets[i].data != NULL ? PyByteArray_GET_SIZE(targets[i].data) : 0;
    }
    for (int i = 0; i < ALL_COLUMNS; i++) {
        column *source = &w->columns[i];
        if (COLUMN_KINDS[i] == COLUMN_TEXT) {
            int64_t base = (int64_t)sizes[i][2];
            int64_t *ends = (int64_t *)source->values.data;
            Py_ssize_t rows = source->values.length / (Py_ssize_t)sizeof(int64_t);
            for (Py_ssize_t row = 0; row < rows; row++) ends[row] += base;
            if (append_bytes(targets[i].data, source->data.data, source->data.length) < 0) goto failed;
        }
        if (append_bytes(targets[i].values, source->values.data, source->values.length) < 0 ||
            append_bytes(targets[i].valid, source->valid.data, source->valid.length) < 0)
            goto failed;
    }
    return 0;
failed:
    for (int i = 0; i < ALL_COLUMNS; i++) {
        PyByteArray_Resize(targets[i].values, sizes[i][0]);
        PyByteArray_Resize(targets[i].valid, sizes[i][1]);
        if (targets[i].data != NULL) PyByteArray_Resize(targets[i].data, sizes[i][2]);
    }
    return STOP_ERROR;
}

/* Fold every line and append every row to the walk's own buffers; runs without the GIL (no Python object). */
static int walk_journal(walk *w, journal_walk *journal) {
    int status = 0;
    uint64_t last_seq = 0;
    moment before = {0};
    const unsigned char *bytes = journal->bytes;
    for (Py_ssize_t i = 0; i < journal->count && status == 0; i++) {
        Py_ssize_t start = (Py_ssize_t)journal->starts[i];
        Py_ssize_t end = i + 1 < journal->count ? (Py_ssize_t)journal->starts[i + 1] : journal->length;
        if (start < 0 || end > journal->length || start > end) return STOP_OTHER;
        while (end > start && (bytes[end - 1] == '\n' || bytes[end - 1] == '\r' || bytes[end - 1] == ' ' ||
                               bytes[end - 1] == '\t'))
            end--;
        cursor c = {bytes + start, bytes + end};
        moment time;
        uint64_t seq = 0;
        status = read_record(w, &c, journal->kinds[i], (int)(i > 0), &seq, &time, last_seq, &before);
        if (status < 0) return status;
        if (journal->kinds[i] == K_TERMINAL) {
            w->last_terminal_seq = seq;
            w->after_set = 0;
        } else if (w->terminal_set && !w->after_set) {
            w->after_set = 1;
            w->after_seq = seq;
            w->after_kind = journal->kinds[i];
            w->after_claimed = journal->kinds[i] == K_CLAIM;
            w->after_by = w->segment_claimed_by;
        }
        if (i == 0) {
            /* The prompt message, dated by the meta record, and the first segment. */
            w->first_time = time;
            open_user_message(w, seq);
            w->last.text_blocks = 1;
            if (buffer_put(&w->text, journal->prompt, journal->prompt_length) < 0) return STOP_ERROR;
            start_segment(w, seq, &time);
        }
        last_seq = seq;
        before = time;
        w->last_time = time;
        if (time.dated && !is_zero_time(&time)) {
            if (w->last_dated.dated && dated_before(&time, &w->last_dated) &&
                add_backstep(w, seq, &time) < 0)
                return STOP_ERROR;
            w->last_dated = time;
            w->last_dated_seq = seq;
        }
    }
    int pending = w->in_turn && turn_waits(w);
    if (w->in_turn && !pending && (status = commit_turn(w)) < 0) return status;
    journal->ends_with_user = w->last.open;
    journal->last_seq = last_seq;
    if ((status = flush_user_message(w)) < 0) return status;
    if (pending && (status = put_message(w, w->turn_seq, 1, "assistant", w->turn_text.data, w->turn_text.length,
                                         w->turn_thinking, w->turn_uses, w->turn_results, w->turn_providers)) < 0)
        return status;
    if (!pending) w->in_turn = 0;
    if ((status = end_segment(w, "running", last_seq, &before)) < 0) return status;
    /* The runtime's Stats.WallClock: from meta.created (else the meta record's own time) to the last record dated
     * with a time Go does not call zero (facts.wall_clock_of); one beyond the duration column is left to Python. */
    const moment *start = w->created.dated && !is_zero_time(&w->created) ? &w->created
                          : w->first_time.dated && !is_zero_time(&w->first_time) ? &w->first_time
                                                                                  : NULL;
    if (start != NULL && (status = gap(start, &w->last_dated, &w->wall_timed, &w->wall_clock)) < 0) return status;
    return put_calls(w);
}

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

PyMODINIT_FUNC PyInit__native(void) {
    PyObject *module = PyModule_Create(&module_definition);
    if (module == NULL) return NULL;
    PyObject *kinds = PyTuple_New(K_COUNT);
    if (kinds == NULL) {
        Py_XDECREF(kinds);
        Py_DECREF(module);
        return NULL;
    }
    for (int i = 0; i < K_COUNT; i++) PyTuple_SET_ITEM(kinds, i, PyUnicode_FromString(KIND_NAMES[i]));
    if (PyModule_AddObject(module, "KINDS", kinds) < 0) {
        Py_DECREF(kinds);
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
