/*
 * The walk of one journal, line by line (``walk_journal``), with each thread's buffers lent from one walk to the
 * next and the rows committed to the caller's column buffers once the journal is tabled whole.
 *
 * Part of the one translation unit ``_native.c`` includes, in order (each part reads only what the parts before it
 * define).
 */

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
