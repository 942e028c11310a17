/*
 * The record model the Python side hands over once (``configure``: the schemas, the record's fields the scan
 * reports, the protocol ids), never restated here.
 *
 * Part of the one translation unit ``_canonical.c`` includes, in order (each part reads only what the parts before
 * it define).
 */

/* -- the module --------------------------------------------------------------------------------------------- */

static void forget_model(void) {
    for (int s = 0; s < the_model.schema_count; s++) {
        for (int i = 0; i < the_model.schemas[s].count; i++) PyMem_Free(the_model.schemas[s].fields[i].name);
    }
    for (int i = 0; i < the_model.protocol_count; i++) PyMem_Free(the_model.protocols[i]);
    memset(&the_model, 0, sizeof(the_model));
}

static char *copy_bytes(PyObject *value, Py_ssize_t *length) {
    char *text;
    if (PyBytes_AsStringAndSize(value, &text, length) < 0) return NULL;
    char *copy = PyMem_Malloc((size_t)*length + 1);
    if (copy == NULL) {
        PyErr_NoMemory();
        return NULL;
    }
    memcpy(copy, text, (size_t)*length);
    copy[*length] = 0;
    return copy;
}

PyDoc_STRVAR(configure_doc,
             "configure(schemas, record_fields, protocols)\n\n"
             "The record model: ``schemas`` a list of structs, each a list of (name: bytes, type: int, schema: int"
             "[, newest_only: int]); "
             "schema 0 is the record. ``record_fields`` the indexes of its seq, protocol and optional fields; "
             "``protocols`` the protocol ids (bytes) a scan reports by index.");

static PyObject *configure(PyObject *Py_UNUSED(module), PyObject *args) {
    PyObject *schemas, *protocols;
    int seq_field, protocol_field, optional_field;
    if (!PyArg_ParseTuple(args, "O!(iii)O!", &PyList_Type, &schemas, &seq_field, &protocol_field, &optional_field,
                          &PyList_Type, &protocols)) {
        return NULL;
    }
    forget_model();
    Py_ssize_t schema_count = PyList_GET_SIZE(schemas), protocol_count = PyList_GET_SIZE(protocols);
    if (schema_count < 1 || schema_count > MAX_SCHEMAS || protocol_count > MAX_FIELDS) {
        PyErr_SetString(PyExc_ValueError, "too many schemas or protocols for the native scanner");
        return NULL;
    }
    for (Py_ssize_t s = 0; s < schema_count; s++) {
        PyObject *fields = PyList_GET_ITEM(schemas, s);
        if (!PyList_Check(fields) || PyList_GET_SIZE(fields) > MAX_FIELDS) {
            PyErr_SetString(PyExc_ValueError, "a schema is a list of at most 32 fields");
            goto failed;
        }
        schema *target = &the_model.schemas[s];
        the_model.schema_count = (int)s + 1;
        for (Py_ssize_t i = 0; i < PyList_GET_SIZE(fields); i++) {
            PyObject *name;
            int type, nested, newest_only = 0;
            if (!PyArg_ParseTuple(PyList_GET_ITEM(fields, i), "O!ii|i", &PyBytes_Type, &name, &type, &nested,
                                  &newest_only)) {
                goto failed;
            }
            if (type < 0 || type >= T_TYPE_COUNT || nested < 0 || nested >= schema_count) {
                PyErr_SetString(PyExc_ValueError, "a field's type or nested schema is out of range");
                goto failed;
            }
            field *f = &target->fields[i];
            f->name = copy_bytes(name, &f->name_length);
            if (f->name == NULL) goto failed;
            f->type = type;
            f->schema = nested;
            f->newest_only = newest_only != 0;
            target->count = (int)i + 1;
        }
    }
    int record_count = the_model.schemas[0].count;
    if (seq_field < 0 || seq_field >= record_count || protocol_field < 0 || protocol_field >= record_count ||
        optional_field < 0 || optional_field >= record_count) {
        PyErr_SetString(PyExc_ValueError, "a record field index is out of range");
        goto failed;
    }
    the_model.seq_field = seq_field;
    the_model.protocol_field = protocol_field;
    the_model.optional_field = optional_field;
    for (Py_ssize_t i = 0; i < protocol_count; i++) {
        PyObject *protocol = PyList_GET_ITEM(protocols, i);
        if (!PyBytes_Check(protocol)) {
            PyErr_SetString(PyExc_TypeError, "protocol ids are bytes");
            goto failed;
        }
        the_model.protocols[i] = copy_bytes(protocol, &the_model.protocol_lengths[i]);
        if (the_model.protocols[i] == NULL) goto failed;
        the_model.protocol_count = (int)i + 1;
    }
    the_model.configured = 1;
    Py_RETURN_NONE;
failed:
    forget_model();
    return NULL;
}
