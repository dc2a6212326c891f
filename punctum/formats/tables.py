"""CSV and TSV tables (call-centre logs, exported transcripts): one text column restored.

    punctum restore -i calls.csv                        # the "text" column of every row
    punctum restore -i calls.csv --text-key utterance --output-key restored

The first row names the columns. The text column is `text_key`, or by default the first
column named text, transcript, transcription, utterance, sentence or pred_text (in any
case). Each row's text is a text of its own (a turn of a call, an utterance): context does
not flow from row to row. The restored text replaces the column's, or goes into a new last
column `output_key`.

CSV: the delimiter is the one of ``,`` ``;`` ``|`` and tab the header row holds most of, and
fields are read with CSV quoting (``"a, b"``, ``""`` for a quote, line breaks inside quotes).
TSV (.tsv): fields are split at tabs with no quoting, as speech corpora write them (Common
Voice, Kaldi-style tables). A row is written back as read unless its text changed; a changed
row is written in the quoting most rows of the file use (only where needed, or every
field), with its line ending.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass

from punctum.formats.transcript import Cue, Transcript, split_tokens

TEXT_COLUMNS = ("text", "transcript", "transcription", "utterance", "sentence", "pred_text")
_DELIMITERS = (",", ";", "\t", "|")
_QUOTING = (csv.QUOTE_MINIMAL, csv.QUOTE_ALL)


@dataclass(frozen=True)
class Table:
    """A table as read (what the writer needs to give it back).

    Attributes:
        rows: each row as (raw text with its line ending, fields); blank rows have no fields.
        header: the index in `rows` of the header row (the first that is not blank; None
            when every row is blank).
        column: the index of the text column.
        delimiter: the field delimiter.
        quoted: CSV quoting (False: TSV, fields joined with tabs).
    """

    rows: tuple[tuple[str, tuple[str, ...]], ...]
    header: int | None
    column: int
    delimiter: str
    quoted: bool

    @property
    def names(self) -> tuple[str, ...]:
        return self.rows[self.header][1]

    def data_rows(self) -> list[int]:
        """Indices of the rows after the header that hold fields (one cue each)."""
        if self.header is None:
            return []
        return [i for i in range(self.header + 1, len(self.rows)) if self.rows[i][1]]


def read_table(text: str, name: str, meta: dict, format: str,
               text_key: str | None) -> Transcript:
    """A "csv" or "tsv" transcript: one cue per row after the header (see the module
    docstring). Errors name the file and line."""
    lines = text.split("\n")
    raw = [line + "\n" for line in lines[:-1]] + ([lines[-1]] if lines[-1] else [])
    quoted = format == "csv"
    delimiter = "\t" if not quoted else _delimiter(raw)
    rows = _rows(raw, delimiter, quoted, name, format)
    header = next((i for i, (_, fields) in enumerate(rows) if fields), None)
    if header is None:  # blank lines only
        return Transcript(format, (), {**meta, "table": Table(tuple(rows), None, 0, delimiter,
                                                                quoted)})
    column = _text_column(rows[header][1], text_key, name, header_line=_line(rows, header))
    table = Table(tuple(rows), header, column, delimiter, quoted)
    cues = tuple(Cue(None, None, split_tokens(_field(rows[i][1], column)))
                 for i in table.data_rows())
    return Transcript(format, cues, {**meta, "table": table, "text_key": table.names[column]})


def _rows(raw: list[str], delimiter: str, quoted: bool, name: str,
          format: str) -> list[tuple[str, tuple[str, ...]]]:
    """(raw text, fields) of every row; a quoted field may span lines."""
    if not quoted:
        return [(line, tuple(line.rstrip("\n").split(delimiter)) if line.strip() else ())
                for line in raw]
    csv.field_size_limit(max(csv.field_size_limit(), 2**31 - 1))  # a whole call in one cell
    reader = csv.reader(raw, delimiter=delimiter, strict=True)
    rows, consumed = [], 0
    try:
        for fields in reader:
            rows.append(("".join(raw[consumed:reader.line_num]), tuple(fields)))
            consumed = reader.line_num
    except csv.Error as error:
        raise ValueError(f"{name}:{reader.line_num}: not a readable {format.upper()} row "
                         f"({error})") from None
    return rows


def _delimiter(raw: list[str]) -> str:
    """The delimiter the first non-blank line holds most of (outside quotes); "," if none."""
    first = next((line for line in raw if line.strip()), "")
    outside = first.split('"')[::2]
    counts = {d: sum(part.count(d) for part in outside) for d in _DELIMITERS}
    best = max(_DELIMITERS, key=lambda d: counts[d])
    return best if counts[best] else ","


def _text_column(names: tuple[str, ...], text_key: str | None, name: str,
                 header_line: int) -> int:
    if text_key is not None:
        if text_key not in names:
            raise ValueError(f"{name}:{header_line}: no {text_key!r} column (columns: "
                             f"{', '.join(names)})")
        return names.index(text_key)
    lowered = [n.strip().lower() for n in names]
    for candidate in TEXT_COLUMNS:
        if candidate in lowered:
            return lowered.index(candidate)
    raise ValueError(f"{name}:{header_line}: no text column (columns: {', '.join(names)}); "
                     f"name it with --text-key")


def _line(rows: list, index: int) -> int:
    """The line number (from 1) where row `index` starts."""
    return 1 + sum(raw.count("\n") for raw, _ in rows[:index])


def _field(fields: tuple[str, ...], column: int) -> str:
    """A row's field (a short row has an empty one)."""
    return fields[column] if column < len(fields) else ""


def dump_table(transcript: Transcript, output_key: str | None = None) -> str:
    """The table with each row's text restored (see the module docstring).

    Raises:
        ValueError: `output_key` names another column the table already has.
    """
    table = transcript.meta.get("table") or _new_table(transcript)
    rows = [raw for raw, _ in table.rows]
    if table.header is None:
        return "".join(rows)
    target = _output_column(table, output_key)
    quoting = _quoting(table)
    if target == len(table.names):  # a new last column
        rows[table.header] = _written(table, table.names + (output_key,), quoting,
                                      rows[table.header])
    for index, cue in zip(table.data_rows(), transcript.cues):
        fields = list(table.rows[index][1])
        if target < len(table.names) and _field(table.rows[index][1], target) == cue.text:
            continue  # written back as read
        fields += [""] * (target + 1 - len(fields))
        fields[target] = cue.text
        rows[index] = _written(table, tuple(fields), quoting, rows[index])
    return "".join(rows)


def _new_table(transcript: Transcript) -> Table:
    """A table for a transcript built in code: a "text" column, a row per cue."""
    rows = (("text\n", ("text",)),) + tuple(("\n", ("",)) for _ in transcript.cues)
    quoted = transcript.format == "csv"
    return Table(rows, 0, 0, "," if quoted else "\t", quoted)


def _output_column(table: Table, output_key: str | None) -> int:
    """The index of the column the restored text goes to (len(names): a new one)."""
    if output_key is None or output_key == table.names[table.column]:
        return table.column
    if output_key in table.names:
        raise ValueError(f"the table already has a {output_key!r} column; choose an output "
                         f"key it does not use (or {table.names[table.column]!r}, the text "
                         f"read)")
    return len(table.names)


def _quoting(table: Table) -> int:
    """The CSV quoting that writes most of the first rows as they were read."""
    if not table.quoted:
        return csv.QUOTE_NONE
    sample = [(raw, fields) for raw, fields in table.rows[:50] if fields]
    scores = [sum(_format(table.delimiter, fields, q) == raw.rstrip("\n") for raw, fields
                  in sample) for q in _QUOTING]
    return _QUOTING[scores.index(max(scores))]


def _written(table: Table, fields: tuple[str, ...], quoting: int, raw: str) -> str:
    """A row written again, with the line ending `raw` had."""
    ending = "\n" if raw.endswith("\n") else ""
    if not table.quoted:
        return table.delimiter.join(fields) + ending
    return _format(table.delimiter, fields, quoting) + ending


def _format(delimiter: str, fields: tuple[str, ...], quoting: int) -> str:
    """One CSV row, without a line ending."""
    buffer = io.StringIO()
    csv.writer(buffer, delimiter=delimiter, quoting=quoting, lineterminator="").writerow(fields)
    return buffer.getvalue()
