/*
 * The scans Python calls: a whole journal (``scan_journal``), a batch of journals in one buffer
 * (``scan_batch``), one line (``proves_line``), and the joins of lines into one JSON array or one buffer.
 *
 * Part of the one translation unit ``_canonical.c`` includes, in order (each part reads only what the parts before
 * it define).
 */

/* The bytes to check (``flags``: PyBUF_SIMPLE to read them, PyBUF_WRITABLE to move them too), once the model
 * is there. */
static int open_input(PyObject *arg, Py_buffer *view, int flags) {
    if (!the_model.configured) {
        PyErr_SetString(PyExc_RuntimeError, "the native scanner has no model: call configure first");
        return -1;
    }
    return PyObject_GetBuffer(arg, view, flags);
}

/* Whether every line of data[0:length) is a proven record (no blank line; the final newline may be missing);
 * its lines are counted into *lines and their envelopes written from index ``first`` of the outputs, never at
 * or past index ``capacity``: the outputs were sized by a newline count taken before the scan, and a buffer
 * another thread writes into while the scan runs without the GIL can hold more lines by now (such a journal
 * is simply not proven). */
static int scan_lines(const unsigned char *data, Py_ssize_t length, Py_ssize_t *lines, Py_ssize_t first,
                      Py_ssize_t capacity, int64_t *starts, uint64_t *seqs, unsigned char *protocols,
                      unsigned char *optional, int *newest) {
    const unsigned char *p = data, *end = data + length;
    Py_ssize_t line = first;
    if (length == 0) return 0;
    *newest = 0;
    while (p < end) {
        const unsigned char *stop = memchr(p, '\n', (size_t)(end - p));
        cursor in_line = {p, stop != NULL ? stop : end, 0};
        envelope record = {0, OTHER_PROTOCOL, 0};
        if (!check_object(&in_line, 0, &record, 0) || in_line.p != in_line.end) return 0;
        if (line >= capacity) return 0;
        *newest |= in_line.newest;
        starts[line] = (int64_t)(p - data);
        seqs[line] = record.seq;
        protocols[line] = (unsigned char)record.protocol;
        optional[line] = (unsigned char)record.optional;
        line++;
        p = in_line.end + 1;
    }
    *lines = line - first;
    return 1;
}

PyDoc_STRVAR(scan_journal_doc,
             "scan_journal(data) -> (starts, seqs, protocols, optional, newest) | None\n\n"
             "For a journal whose every line is canonical (no blank line; the last newline may be missing): "
             "each line's start offset (int64), seq (uint64), protocol index (uint8; 255 for an id not configured) and "
             "optional flag (uint8), "
             "as bytes in native byte order, and whether any line holds a field only the newest line writes. None "
             "when any line is not proven canonical.");

static PyObject *scan_journal(PyObject *Py_UNUSED(module), PyObject *arg) {
    Py_buffer view;
    if (open_input(arg, &view, PyBUF_SIMPLE) < 0) return NULL;
    const unsigned char *data = view.buf, *end = data + view.len;
    PyObject *starts = NULL, *seqs = NULL, *protocols = NULL, *optional = NULL, *result = NULL;
    Py_ssize_t lines = 0;
    int proven = view.len > 0, newest = 0;
    if (proven) {
        for (const unsigned char *p = data; (p = memchr(p, '\n', (size_t)(end - p))) != NULL; p++) lines++;
        if (end[-1] != '\n') lines++;
    }
    if (proven) {
        starts = PyBytes_FromStringAndSize(NULL, lines * 8);
        seqs = PyBytes_FromStringAndSize(NULL, lines * 8);
        protocols = PyBytes_FromStringAndSize(NULL, lines);
        optional = PyBytes_FromStringAndSize(NULL, lines);
        if (starts == NULL || seqs == NULL || protocols == NULL || optional == NULL) goto done;
        int64_t *start_out = (int64_t *)PyBytes_AS_STRING(starts);
        uint64_t *seq_out = (uint64_t *)PyBytes_AS_STRING(seqs);
        unsigned char *protocol_out = (unsigned char *)PyBytes_AS_STRING(protocols);
        unsigned char *optional_out = (unsigned char *)PyBytes_AS_STRING(optional);
        Py_ssize_t scanned = 0;
        Py_BEGIN_ALLOW_THREADS;
        proven = scan_lines(data, view.len, &scanned, 0, lines, start_out, seq_out, protocol_out, optional_out,
                            &newest);
        Py_END_ALLOW_THREADS;
    }
    if (!proven) {
        result = Py_NewRef(Py_None);
    } else {
        result = Py_BuildValue("OOOON", starts, seqs, protocols, optional, PyBool_FromLong(newest));
    }
done:
    Py_XDECREF(starts);
    Py_XDECREF(seqs);
    Py_XDECREF(protocols);
    Py_XDECREF(optional);
    PyBuffer_Release(&view);
    return result;
}

PyDoc_STRVAR(scan_batch_doc,
             "scan_batch(buffer, lengths) -> (body_length, proven, offsets, seqs, protocols, optional, newest)\n\n"
             "``buffer`` (a writable buffer) holds journals one after another, ``lengths`` (int64, native order) "
             "their sizes. Each journal is scanned; the lines of every proven one are moved, without their "
             "newlines, to the front of the buffer, in order, so that buffer[0:body_length] is the records "
             "table's body. ``proven``: per journal, its line count, or -1 for a journal not proven (its bytes "
             "are dropped: the caller reads it the other way). ``offsets``: each moved line's start in the body, "
             "then body_length (int64); ``seqs``, ``protocols``, ``optional``: per moved line, as scan_journal; "
             "``newest``: per journal (uint8), whether a proven one holds a field only the newest line writes.");

static PyObject *scan_batch(PyObject *Py_UNUSED(module), PyObject *args) {
    PyObject *buffer_object;
    Py_buffer lengths_view;
    if (!PyArg_ParseTuple(args, "Oy*", &buffer_object, &lengths_view)) return NULL;
    Py_buffer view;
    if (open_input(buffer_object, &view, PyBUF_WRITABLE) < 0) {
        PyBuffer_Release(&lengths_view);
        return NULL;
    }
    PyObject *proven = NULL, *offsets = NULL, *seqs = NULL, *protocols = NULL, *optional = NULL, *result = NULL;
    PyObject *newest = NULL;
    Py_ssize_t journals = lengths_view.len / 8, total = 0, upper = 0;
    /* A copy, never the caller's buffer: it may start at any address (reading it as int64_t there is undefined
     * behaviour) and another thread may change it while the scan below runs without the GIL. */
    int64_t *lengths = NULL;
    unsigned char *data = view.buf;
    if (lengths_view.len % 8 != 0) {
        PyErr_SetString(PyExc_ValueError, "the journal lengths are int64 values: their size is a multiple of 8");
        goto done;
    }
    lengths = PyMem_Malloc(journals > 0 ? (size_t)journals * sizeof(int64_t) : 1);
    if (lengths == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    memcpy(lengths, lengths_view.buf, (size_t)lengths_view.len);
    for (Py_ssize_t j = 0; j < journals; j++) {
        if (lengths[j] < 0 || lengths[j] > view.len - total) {
            PyErr_SetString(PyExc_ValueError, "the journal lengths run past the buffer");
            goto done;
        }
        total += (Py_ssize_t)lengths[j];
    }
    /* at most one line per newline, plus each journal's last line without one */
    for (const unsigned char *p = data; (p = memchr(p, '\n', (size_t)(data + total - p))) != NULL; p++) upper++;
    upper += journals;
    proven = PyBytes_FromStringAndSize(NULL, journals * 8);
    offsets = PyBytes_FromStringAndSize(NULL, (upper + 1) * 8);
    seqs = PyBytes_FromStringAndSize(NULL, upper * 8);
    protocols = PyBytes_FromStringAndSize(NULL, upper);
    optional = PyBytes_FromStringAndSize(NULL, upper);
    newest = PyBytes_FromStringAndSize(NULL, journals);
    if (proven == NULL || offsets == NULL || seqs == NULL || protocols == NULL || optional == NULL || newest == NULL) {
        goto done;
    }
    unsigned char *newest_out = (unsigned char *)PyBytes_AS_STRING(newest);
    int64_t *proven_out = (int64_t *)PyBytes_AS_STRING(proven);
    int64_t *offset_out = (int64_t *)PyBytes_AS_STRING(offsets);
    uint64_t *seq_out = (uint64_t *)PyBytes_AS_STRING(seqs);
    unsigned char *protocol_out = (unsigned char *)PyBytes_AS_STRING(protocols);
    unsigned char *optional_out = (unsigned char *)PyBytes_AS_STRING(optional);
    Py_ssize_t lines = 0, written = 0, read = 0;
    Py_BEGIN_ALLOW_THREADS;
    for (Py_ssize_t j = 0; j < journals; j++) {
        Py_ssize_t length = (Py_ssize_t)lengths[j], count = 0;
        int holds_newest = 0;
        /* offset_out first holds each line's start in its journal; it becomes the start in the body below */
        int scanned = scan_lines(data + read, length, &count, lines, upper, offset_out, seq_out, protocol_out,
                                 optional_out, &holds_newest);
        newest_out[j] = (unsigned char)(scanned && holds_newest);
        if (!scanned) {
            proven_out[j] = -1;
            read += length;
            continue;
        }
        proven_out[j] = count;
        for (Py_ssize_t i = 0; i < count; i++) {
            Py_ssize_t start = (Py_ssize_t)offset_out[lines + i];
            Py_ssize_t stop = i + 1 < count ? (Py_ssize_t)offset_out[lines + i + 1] - 1 : length;
            if (i + 1 == count && length > 0 && data[read + length - 1] == '\n') stop = length - 1;
            /* the body only ever shrinks behind the read position, so the move never overwrites unread bytes */
            memmove(data + written, data + read + start, (size_t)(stop - start));
            offset_out[lines + i] = (int64_t)written;
            written += stop - start;
        }
        lines += count;
        read += length;
    }
    offset_out[lines] = (int64_t)written;
    Py_END_ALLOW_THREADS;
    if (_PyBytes_Resize(&offsets, (lines + 1) * 8) < 0 || _PyBytes_Resize(&seqs, lines * 8) < 0 ||
        _PyBytes_Resize(&protocols, lines) < 0 || _PyBytes_Resize(&optional, lines) < 0) {
        goto done;
    }
    result = Py_BuildValue("nOOOOOO", written, proven, offsets, seqs, protocols, optional, newest);
done:
    PyMem_Free(lengths);
    Py_XDECREF(proven);
    Py_XDECREF(offsets);
    Py_XDECREF(seqs);
    Py_XDECREF(protocols);
    Py_XDECREF(optional);
    Py_XDECREF(newest);
    PyBuffer_Release(&view);
    PyBuffer_Release(&lengths_view);
    return result;
}

PyDoc_STRVAR(proves_line_doc,
             "proves_line(line) -> int\n\n"
             "Whether one record's bytes (a line without its newline, or a JetStream body) are proven canonical: 0 "
             "when not, 1 when they are, 2 when they are and hold a field only the newest line writes.");

static PyObject *proves_line(PyObject *Py_UNUSED(module), PyObject *arg) {
    Py_buffer view;
    if (open_input(arg, &view, PyBUF_SIMPLE) < 0) return NULL;
    cursor c = {view.buf, (const unsigned char *)view.buf + view.len, 0};
    envelope ignored = {0, OTHER_PROTOCOL, 0};
    int proven = check_object(&c, 0, &ignored, 0) && c.p == c.end;
    PyBuffer_Release(&view);
    return PyLong_FromLong(proven ? 1 + c.newest : 0);
}

PyDoc_STRVAR(json_array_doc,
             "json_array(journal) -> bytes\n\n"
             "A journal's lines (no blank one) as one JSON array, ``[line,line,...]``, in one copy: what a list "
             "decoder reads all its records from.");

static PyObject *json_array(PyObject *Py_UNUSED(module), PyObject *arg) {
    if (!PyBytes_Check(arg)) {
        PyErr_SetString(PyExc_TypeError, "json_array takes bytes");
        return NULL;
    }
    Py_ssize_t length = PyBytes_GET_SIZE(arg);
    const char *data = PyBytes_AS_STRING(arg);
    if (length > 0 && data[length - 1] == '\n') length--; /* the final newline ends the last line */
    PyObject *array = PyBytes_FromStringAndSize(NULL, length + 2);
    if (array == NULL) return NULL;
    char *out = PyBytes_AS_STRING(array), *end = out + 1 + length;
    out[0] = '[';
    memcpy(out + 1, data, (size_t)length);
    for (char *p = out + 1; (p = memchr(p, '\n', (size_t)(end - p))) != NULL; p++) *p = ',';
    *end = ']';
    return array;
}

PyDoc_STRVAR(join_lines_doc,
             "join_lines(journals) -> bytes\n\n"
             "The bytes of every journal (a sequence of bytes) one after another, without their newlines: the "
             "records table's body column in one copy.");

static PyObject *join_lines(PyObject *Py_UNUSED(module), PyObject *arg) {
    PyObject *parts = PySequence_Tuple(arg); /* holds every part while the GIL is released */
    if (parts == NULL) return NULL;
    Py_ssize_t count = PyTuple_GET_SIZE(parts), total = 0;
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *part = PyTuple_GET_ITEM(parts, i);
        if (!PyBytes_Check(part)) {
            Py_DECREF(parts);
            PyErr_SetString(PyExc_TypeError, "join_lines takes a sequence of bytes");
            return NULL;
        }
        total += PyBytes_GET_SIZE(part);
    }
    PyObject *joined = PyBytes_FromStringAndSize(NULL, total);
    if (joined == NULL) {
        Py_DECREF(parts);
        return NULL;
    }
    char *out = PyBytes_AS_STRING(joined);
    Py_BEGIN_ALLOW_THREADS;
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *part = PyTuple_GET_ITEM(parts, i);
        const char *p = PyBytes_AS_STRING(part), *end = p + PyBytes_GET_SIZE(part);
        while (p < end) {
            const char *stop = memchr(p, '\n', (size_t)(end - p));
            const char *until = stop != NULL ? stop : end;
            memcpy(out, p, (size_t)(until - p));
            out += until - p;
            p = until + 1;
        }
    }
    Py_END_ALLOW_THREADS;
    Py_DECREF(parts);
    if (_PyBytes_Resize(&joined, out - PyBytes_AS_STRING(joined)) < 0) return NULL;
    return joined;
}
