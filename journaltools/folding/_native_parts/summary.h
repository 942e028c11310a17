/*
 * What the walk answers once a journal is walked whole: its calls' rows, the warnings it reports itself
 * (``backsteps``, ``unanswered``) and the runs row's values (``summary``, ``folding.native.NativeRun``).
 *
 * Part of the one translation unit ``_native.c`` includes, in order (each part reads only what the parts before it
 * define).
 */

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
