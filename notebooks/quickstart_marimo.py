import marimo

__generated_with = "0.25.2"
app = marimo.App(width="medium")


@app.cell
def _():
    import marimo as mo

    return (mo,)


@app.cell
def _(mo):
    mo.md(
        """
        # journaltools quick start, in marimo

        Every run of a source as tables, then the **run browser** and one run's **conversation**. Both widgets are
        anywidgets, so they work here as in JupyterLab: click a row to open its run above the table (Escape or
        *close* closes it), click a column header to sort, type in the search box or pick statuses to narrow the list.

        Set `SOURCE` to your runs (a state directory or a `nats://` URL). Left as it is, it is `$JOURNALTOOLS_SOURCE`
        when set, else the runtime's own directory when it holds journals, else the bundled samples.
        """
    )
    return


@app.cell
def _():
    from journaltools.samples import notebook_source

    SOURCE = notebook_source()
    SOURCE
    return (SOURCE,)


@app.cell
def _(SOURCE):
    import journaltools as jt

    # Lenient: a journal the runtime would refuse is a row with status "invalid", and its findings say why.
    tables = jt.load(SOURCE, strict=False, progress=False)
    runs = tables.to_pandas().runs
    runs[["run", "status", "segments", "llm_calls", "out_tokens"]].sort_values("run").head(5)
    return (runs,)


@app.cell
def _(SOURCE):
    from journaltools.widgets import RunBrowserSurface

    browser = RunBrowserSurface.from_source(SOURCE, rows_per_page=15)
    browser
    return


@app.cell
def _(mo):
    mo.md("""One run's conversation on its own: here a run that did not complete, with the banner saying why.""")
    return


@app.cell
def _(SOURCE, runs):
    from journaltools.widgets import ConversationSurface

    ended_badly = runs[runs.status.isin(["error", "budget", "max_iterations"])].run.tolist()
    ended = sorted(ended_badly or runs.run.tolist())[0]
    ConversationSurface.from_source(SOURCE, ended)
    return


if __name__ == "__main__":
    app.run()
