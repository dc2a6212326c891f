"""CSV and TSV tables (call-centre logs, exported transcripts): one text column restored.

    punctum restore -i calls.csv                        # the "text" column of every row
    punctum restore -i calls.csv --text-key utterance --output-key restored

The first row that is not blank names the columns. The text column is `text_key`, or by
default the first of the names text, transcript, transcription, utterance, sentence and
pred_text (tried in this order, in any case, spaces around ignored) that the header holds.
Each row's text is a text of its own (an utterance of a corpus), unless the header names a
start column (start, start_time, begin, ...): then the rows are segments of recordings
(Whisper's TSV "start end text", a call log's turns) and context flows from row to row, a
sentence ending only where the model ends one, as between subtitle cues; a text ends where
the speaker column (speaker, spk, role, channel, ...) or the recording column (file, path,
call_id, conversation_id, ...) changes value, or where the start time goes back. The
restored text replaces the column's, or goes into a new column `output_key`, after the
header's last (cells a row has beyond the header move right).

CSV: the delimiter is the one of ``,`` ``;`` tab ``|`` (preferred in this order on a tie)
that every one of the first lines holds most of, outside quotes; cells are read with CSV
quoting (``"a, b"``, ``""`` for a quote, line breaks inside quotes), strictly: a quote
that is never closed, or text after a closing quote, is an error naming the line rather
than rows read into one cell. TSV (.tsv): cells are split at tabs with no quoting, as
speech corpora write them (Common Voice, Kaldi-style tables).

Rows are kept as read, line endings included (an Excel cell's line feeds in a file of CRLF
rows stay line feeds). In a row whose text changed only that cell is written again, quoted
as it was (a new cell: quoted when every cell of its row is), or where CSV needs quotes.
"""

from __future__ import annotations

import csv
import itertools
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import NamedTuple

from punctum.formats.transcript import Cue, Transcript, shown, split_tokens

TEXT_COLUMNS = ("text", "transcript", "transcription", "utterance", "sentence", "pred_text")
_DELIMITERS = (",", ";", "\t", "|")
_SAMPLE_LINES = 5  # the first lines, whose delimiter is the table's
_MAX_AHEAD = 10_000  # lines read ahead for them at most (blank lines, cells of many lines)
CHUNK_WORDS = 20_000  # words restored at a time by `stream_table`
# Columns that make the rows segments of recordings (names compared lowercased, stripped):
# the start time, and the speaker and recording whose change ends a text.
START_COLUMNS = ("start", "start_time", "starttime", "start_ms", "start_s", "start_sec",
                 "begin", "begin_time", "offset")
SPEAKER_COLUMNS = ("speaker", "speaker_id", "speaker_label", "speaker_name", "spk", "role",
                   "channel", "party")
RECORDING_COLUMNS = ("file", "filename", "file_name", "path", "audio", "audio_path",
                     "audio_file", "audio_filepath", "recording", "recording_id", "call",
                     "call_id", "conversation", "conversation_id", "session", "session_id",
                     "episode", "episode_id", "meeting", "meeting_id", "document", "doc_id")
_CLOCK = re.compile(r"^(?:(\d+):)?(\d+):(\d+(?:[.,]\d+)?)$")  # [h:]mm:ss[.fff]

# A whole call may sit in one cell: no limit but memory (csv's default is 131,072 characters;
# the setting is the csv module's, for the process).
csv.field_size_limit(max(csv.field_size_limit(), 2**31 - 1))


class Row(NamedTuple):
    """A row as read: its text, line ending included, and its cells (none: a blank row)."""

    raw: str
    cells: tuple[str, ...]


@dataclass(frozen=True)
class Table:
    """A table as read (what the writer needs to give it back).

    Attributes:
        rows: every row, blank ones included.
        header: the index in `rows` of the header row (the first that is not blank; None
            when every row is blank).
        column: the index of the text column among the header's cells.
        delimiter: the cell delimiter.
        quoted: CSV quoting (False: TSV, cells joined with tabs).
    """

    rows: tuple[Row, ...]
    header: int | None
    column: int
    delimiter: str
    quoted: bool

    @property
    def names(self) -> tuple[str, ...]:
        """The header's cells (none when every row is blank)."""
        return () if self.header is None else self.rows[self.header].cells

    def data_rows(self) -> list[int]:
        """Indices of the rows after the header that are not blank (one cue each)."""
        if self.header is None:
            return []
        return [i for i in range(self.header + 1, len(self.rows)) if self.rows[i].cells]


def read_table(text: str, name: str, meta: dict, format: str,
               text_key: str | None) -> Transcript:
    """A "csv" or "tsv" transcript of `text` as decoded (line endings not normalised): one
    cue per row after the header (see the module docstring). Errors name the file and line.
    """
    ending = _row_ending(text)
    lines = text.split(ending)
    reader = RowReader([line + ending for line in lines[:-1]] + ([lines[-1]] if lines[-1]
                                                                  else []), format, name)
    rows = list(reader)
    header = next((i for i, row in enumerate(rows) if row.cells), None)
    if header is None:  # blank lines only
        table = Table(tuple(rows), None, 0, reader.delimiter, reader.quoted)
        return Transcript(format, (), {**meta, "table": table})
    column = _text_column(rows[header].cells, text_key, f"{name}:{_line(rows, header)}")
    table = Table(tuple(rows), header, column, reader.delimiter, reader.quoted)
    cues = tuple(_row_cue(rows[i], column) for i in table.data_rows())
    documents = row_documents(table, [rows[i] for i in table.data_rows()])
    return Transcript(format, cues, {**meta, "table": table, "text_key": table.names[column],
                                     **({"documents": documents} if documents else {})})


def _row_ending(text: str) -> str:
    """What a table's rows end with: "\n" ("\r\n" rows keep their "\r"), or "\r" alone
    (classic Mac OS) where the first line ends so (a quoted cell may still hold a "\n")."""
    match = re.search(r"\r\r\n|\r\n?|\n", text)  # ("\r\r\n": Python's csv on Windows)
    return "\r" if match is not None and match.group() == "\r" else "\n"


def stream_table(lines: Iterable[str], format: str, name: str,
                 restore: Callable[[Transcript], Transcript], text_key: str | None = None,
                 output_key: str | None = None,
                 chunk_words: int = CHUNK_WORDS) -> Iterator[str]:
    """The text of a table restored in chunks of rows, as pieces to write: what
    `dump_table` writes for the table read from `lines` (each with its line ending), in
    memory bounded by `chunk_words` words rather than by the file's size. (With an int8
    model a label at a near-tie can differ from the whole table's: ONNX Runtime quantizes
    each batch's activations with that batch's own scale, so what a text is batched with
    can tip it; docs/BENCHMARKS.md measures this "batch effect".)

    Args:
        restore: restores a transcript of rows (`restore_transcript` with a model).
    """
    reader = RowReader(lines, format, name)
    rows = iter(reader)
    for header in rows:
        if header.cells:
            break
        yield header.raw  # blank lines before the header
    else:
        return
    column = _text_column(header.cells, text_key, f"{name}:{reader.row_line}")
    table = Table((header,), 0, column, reader.delimiter, reader.quoted)  # the header only:
    # what the rows' writers need (delimiter, quoting, names, text column); rows come after
    target, new_column = _output_column(table, output_key)
    yield _with_cell(table, header, target, output_key, insert=True) if new_column else header.raw
    chunk: list[Row] = []
    words = 0
    for row in rows:
        chunk.append(row)
        words += len(_cell(row.cells, column).split())
        if words >= chunk_words:
            yield from _restored_chunk(table, chunk, format, restore, target, new_column)
            chunk, words = [], 0
    yield from _restored_chunk(table, chunk, format, restore, target, new_column)


def _restored_chunk(table: Table, rows: list[Row], format: str,
                    restore: Callable[[Transcript], Transcript], target: int,
                    new_column: bool) -> Iterator[str]:
    """The rows' text with each data row's text restored (one `restore` call for all)."""
    cues = tuple(_row_cue(row, table.column) for row in rows if row.cells)
    documents = row_documents(table, rows)
    meta = {"documents": documents} if documents else {}
    restored = iter(restore(Transcript(format, cues, meta)).cues if cues else ())
    for row in rows:
        yield (_restored_row(table, row, next(restored), target, new_column) if row.cells
               else row.raw)


def row_documents(table: Table, rows: list[Row]) -> list[list[int]] | None:
    """For a table of segments of recordings (its header names a start column), the texts
    the model sees as wholes, each a list of indexes into the non-blank rows of `rows` (in
    order): runs of rows of one speaker and one recording whose start times do not go back.
    None for a table of separate texts (no start column: each row a text of its own)."""
    names = [n.strip().lower() for n in table.names]
    start = _first_of(names, START_COLUMNS)
    if start is None or start == table.column:
        return None
    keys = [k for k in (_first_of(names, SPEAKER_COLUMNS), _first_of(names, RECORDING_COLUMNS))
            if k is not None and k != table.column]
    documents: list[list[int]] = []
    last_key: tuple[str, ...] | None = None
    last_time: float | None = None
    for index, row in enumerate(r for r in rows if r.cells):
        key = tuple(_cell(row.cells, k).strip() for k in keys)
        time = _seconds(_cell(row.cells, start))
        if key != last_key or (time is not None and last_time is not None and time < last_time):
            documents.append([])
        documents[-1].append(index)
        last_key, last_time = key, time if time is not None else last_time
    return documents


def _first_of(names: list[str], candidates: tuple[str, ...]) -> int | None:
    """The index in `names` of the first of `candidates` it holds, or None."""
    return next((names.index(c) for c in candidates if c in names), None)


def _seconds(cell: str) -> float | None:
    """A start time as a number ("12.5", "12500", "00:01:02.5", "1:02,5"), or None (the
    column's unit, whatever it is, only compares rows)."""
    cell = cell.strip()
    clock = _CLOCK.match(cell)
    if clock:
        hours, minutes, seconds = clock.groups()
        return int(hours or 0) * 3600 + int(minutes) * 60 + float(seconds.replace(",", "."))
    try:
        value = float(cell)
    except ValueError:
        return None
    return value if value == value else None  # (not NaN)


class RowReader:
    """The rows of a table, read lazily from its lines (each with its line ending).

    Attributes:
        delimiter: the cell delimiter (CSV: decided by the first lines, read ahead).
        quoted: CSV quoting (False: TSV).
        row_line: the line number (from 1) where the last row given started.
    """

    def __init__(self, lines: Iterable[str], format: str, name: str) -> None:
        self.name = name
        self.quoted = format == "csv"
        lines = iter(lines)
        ahead: list[str] = []
        filled = 0  # non-blank lines in `ahead`
        while self.quoted and filled < _SAMPLE_LINES and len(ahead) < _MAX_AHEAD:
            line = next(lines, None)
            if line is None:
                break
            ahead.append(line)
            filled += bool(line.strip())
        self.delimiter = _delimiter(ahead) if self.quoted else "\t"
        self.lines = itertools.chain(ahead, lines)
        self.row_line = 0

    def __iter__(self) -> Iterator[Row]:
        if not self.quoted:
            for number, line in enumerate(self.lines, start=1):
                self.row_line = number
                yield _tsv_row(line)
            return
        pulled: list[str] = []  # the lines csv has read for the row it is reading
        reader = csv.reader(_recorded(self.lines, pulled), delimiter=self.delimiter,
                            strict=True)
        consumed = 0
        while True:
            try:
                cells = next(reader, None)
            except csv.Error as error:
                reason = ("a carriage return inside a cell that is not quoted"
                          if "new-line character" in str(error) else str(error))
                raise ValueError(f"{self.name}:{consumed + 1}: not a readable CSV row "
                                 f"({reason})") from None
            if cells is None:
                return
            text = "".join(pulled)
            pulled.clear()
            self.row_line, consumed = consumed + 1, reader.line_num
            yield Row(text, tuple(cells) if text.strip() else ())


def _recorded(lines: Iterator[str], pulled: list[str]) -> Iterator[str]:
    """`lines`, each also appended to `pulled` as it is read."""
    for line in lines:
        pulled.append(line)
        yield line


def _tsv_row(line: str) -> Row:
    return Row(line, tuple(_without_ending(line).split("\t")) if line.strip() else ())


def _without_ending(raw: str) -> str:
    return raw[:len(raw) - len(_ending(raw))]


def _ending(raw: str) -> str:
    """The line ending a row was read with ("" for a last line without one)."""
    return "\r\n" if raw.endswith("\r\n") else "\n" if raw.endswith("\n") else \
        "\r" if raw.endswith("\r") else ""  # (a file of carriage returns alone)


def _delimiter(lines: list[str]) -> str:
    """The delimiter every one of the non-blank rows in `lines` holds most of, outside
    quotes (a quoted cell may span lines; ties: in `_DELIMITERS` order); "," if none holds
    any."""
    rows: list[dict[str, int]] = []
    counts, quoted, filled = dict.fromkeys(_DELIMITERS, 0), False, False
    for line in lines:
        for char in line:
            if char == '"':
                quoted = not quoted
            elif not quoted and char in counts:
                counts[char] += 1
        filled = filled or bool(line.strip())
        if not quoted:  # the row ends with this line
            if filled:
                rows.append(counts)
            counts, filled = dict.fromkeys(_DELIMITERS, 0), False
    scores = {d: min((row[d] for row in rows), default=0) for d in _DELIMITERS}
    best = max(_DELIMITERS, key=lambda d: scores[d])
    return best if scores[best] else ","


def _text_column(names: tuple[str, ...], text_key: str | None, where: str) -> int:
    """The index of the text column (see the module docstring); ValueError naming the
    header's line when there is none."""
    listed = ", ".join(shown(n, 40) for n in names[:20]) + (f" and {len(names) - 20:,} more"
                                                       if len(names) > 20 else "")
    if text_key is not None:
        for candidates in (list(names), [n.strip() for n in names]):
            if text_key in candidates:
                return candidates.index(text_key)
        raise ValueError(f"{where}: no {text_key!r} column (columns: {listed})")
    lowered = [n.strip().lower() for n in names]
    for candidate in TEXT_COLUMNS:
        if candidate in lowered:
            return lowered.index(candidate)
    raise ValueError(f"{where}: no text column (columns: {listed}); name the column to "
                     f"restore (--text-key)")


def _line(rows: list[Row], index: int) -> int:
    """The line number (from 1) where row `index` starts."""
    return 1 + sum(row.raw.count("\n") for row in rows[:index])


def _row_cue(row: Row, column: int) -> Cue:
    """A data row as a cue: the tokens of its text cell."""
    return Cue(None, None, split_tokens(_cell(row.cells, column)))


def _cell(cells: tuple[str, ...], column: int) -> str:
    """A row's cell (a short row has an empty one)."""
    return cells[column] if column < len(cells) else ""


def dump_table(transcript: Transcript, output_key: str | None = None) -> str:
    """The table with each row's text restored (see the module docstring).

    Raises:
        ValueError: `output_key` names another column the table already has.
    """
    table = transcript.meta.get("table") or _new_table(transcript)
    texts = [row.raw for row in table.rows]
    if table.header is None:
        return "".join(texts)
    target, new_column = _output_column(table, output_key)
    if new_column:
        texts[table.header] = _with_cell(table, table.rows[table.header], target, output_key,
                                         insert=True)
    for index, cue in zip(table.data_rows(), transcript.cues):
        texts[index] = _restored_row(table, table.rows[index], cue, target, new_column)
    return "".join(texts)


def _restored_row(table: Table, row: Row, cue: Cue, target: int, new_column: bool) -> str:
    """A data row with its restored text (as read where the text did not change)."""
    if not new_column and row.raw and _cell(row.cells, target) == cue.text:
        return row.raw
    return _with_cell(table, row, target, cue.text, insert=new_column)


def _new_table(transcript: Transcript) -> Table:
    """A table for a transcript built in code: a "text" column, a row per cue (rows with
    no text read, so that each is written)."""
    rows = (Row("text\n", ("text",)),) + tuple(Row("", ("",)) for _ in transcript.cues)
    quoted = transcript.format == "csv"
    return Table(rows, 0, 0, "," if quoted else "\t", quoted)


def _output_column(table: Table, output_key: str | None) -> tuple[int, bool]:
    """(index of the column the restored text goes to, whether it is a new one)."""
    if output_key is None or output_key == table.names[table.column]:
        return table.column, False
    if not table.quoted and any(c in output_key for c in (table.delimiter, "\n", "\r")):
        raise ValueError(f"output key {output_key!r} holds a tab or a line break, which a TSV "
                         f"header cannot hold (TSV has no quoting)")
    if output_key in table.names:
        raise ValueError(f"the table already has a {output_key!r} column; choose an output "
                         f"key it does not use (or {table.names[table.column]!r}, the text "
                         f"read)")
    return len(table.names), True


def _with_cell(table: Table, row: Row, column: int, text: str, insert: bool) -> str:
    """The row's text with cell `column` replaced by `text` (`insert`: a new cell there),
    every other cell and the line ending as written. A short row is filled out with empty
    cells. The cell is quoted as the one it replaces was (a new one: as every cell of the
    row is, if it is), else where CSV needs it."""
    body, ending = _without_ending(row.raw), _ending(row.raw) if row.raw else "\n"
    spans = _cell_spans(body, table.delimiter, table.quoted, row.cells) if row.raw else None
    if spans is None:  # written afresh (a row built in code)
        cells = list(row.cells) + [""] * (column - len(row.cells))
        cells[column:column + (not insert)] = [text]
        return _csv_line(table, cells) + ending
    quoted = [body[a:b].startswith('"') for a, b in spans]
    if column < len(spans):
        start, end = spans[column]
        like_quoted = quoted[column] if not insert else all(quoted)
        cell = _quote(table, text, like_quoted)
        if insert:
            return body[:start] + cell + table.delimiter + body[start:] + ending
        return body[:start] + cell + body[end:] + ending
    filler = table.delimiter * (column - len(spans) + 1)
    return body + filler + _quote(table, text, all(quoted)) + ending


def _cell_spans(body: str, delimiter: str, quoted: bool,
                cells: tuple[str, ...]) -> list[tuple[int, int]] | None:
    """The (start, end) of each cell in a row's text, or None when they do not read as the
    csv module read them."""
    if not quoted:
        spans, start = [], 0
        for cell in cells:
            spans.append((start, start + len(cell)))
            start += len(cell) + 1
        return spans
    pattern = re.compile(r'"(?:[^"]|"")*"|[^' + re.escape(delimiter) + r'"\r\n]*')
    spans, position = [], 0
    while True:
        match = pattern.match(body, position)
        spans.append(match.span())
        position = match.end()
        if position == len(body):
            break
        if body[position] != delimiter:
            return None
        position += 1
    read = tuple(_unquoted(body[a:b]) for a, b in spans)
    return spans if read == cells else None


def _unquoted(cell: str) -> str:
    return cell[1:-1].replace('""', '"') if cell.startswith('"') else cell


def _quote(table: Table, text: str, quoted: bool) -> str:
    """A cell as written: in quotes when `quoted` or when CSV needs them (a delimiter, a
    quote or a line break in it)."""
    if not table.quoted:
        return text
    needs = any(c in text for c in (table.delimiter, '"', "\r", "\n"))
    return '"' + text.replace('"', '""') + '"' if quoted or needs else text


def _csv_line(table: Table, cells: list[str]) -> str:
    """A row written from its cells, without a line ending (a lone empty cell quoted, so
    that it does not read as a blank row)."""
    if cells == [""]:
        return '""' if table.quoted else ""
    return table.delimiter.join(_quote(table, cell, False) for cell in cells)
