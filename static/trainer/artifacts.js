// Sorting a lab's tables (questions/labs/display.py renders them): each column header is
// a <button> inside its <th>, so a click, or Enter or Space on the focused header, sorts
// the rows by that column; the same header again reverses the order. The <th> carries
// aria-sort ("ascending" / "descending"; the other headers "none") for screen readers.
//
// Numbers sort by value even when written with thousands commas or a unit ("1,024",
// "12.5 ms", "3 s": times and sizes are scaled to one unit); empty cells go last in
// either direction; text sorts naturally ("step 2" before "step 10"). One listener on
// the document, so tables that htmx swaps in later sort too. No inline handlers: the
// Content-Security-Policy forbids them.

const UNIT_SCALE = {
  ns: 1e-9, us: 1e-6, "µs": 1e-6, ms: 1e-3, s: 1, min: 60, h: 3600,
  b: 1, kb: 1e3, mb: 1e6, gb: 1e9, tb: 1e12, kib: 1024, mib: 1024 ** 2, gib: 1024 ** 3, tib: 1024 ** 4,
};
const NUMBER = /^([-+]?(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?)\s*(%|[a-zµ]+)?(?:\/[a-z]+)?$/i;

// The cell's value as a number, or null when it is not one (text, or empty).
function numericValue(text) {
  const match = NUMBER.exec(text.trim().replace(/(\d),(?=\d{3})/g, "$1"));
  if (!match) return null;
  const unit = (match[2] || "").toLowerCase();
  return Number(match[1]) * (UNIT_SCALE[unit] ?? 1);
}

const collator = new Intl.Collator(undefined, { numeric: true, sensitivity: "base" });

function compareCells(a, b) {
  if (a.empty || b.empty) return a.empty - b.empty;
  if (a.number !== null && b.number !== null) return a.number - b.number;
  if (a.number !== null) return -1; // numbers before text within one column
  if (b.number !== null) return 1;
  return collator.compare(a.text, b.text);
}

function sortTable(table, column, descending) {
  const body = table.tBodies[0];
  const rows = Array.from(body.rows, (row, index) => {
    const text = row.cells[column] ? row.cells[column].textContent : "";
    return { row, index, cell: { text, empty: text.trim() === "", number: numericValue(text) } };
  });
  rows.sort((a, b) => {
    if (a.cell.empty !== b.cell.empty) return a.cell.empty - b.cell.empty; // empties last both ways
    const order = compareCells(a.cell, b.cell);
    return (descending ? -order : order) || a.index - b.index;
  });
  body.append(...rows.map((entry) => entry.row));
}

document.addEventListener("click", (event) => {
  const button = event.target.closest("table.sortable th > button.sort-button");
  if (!button) return;
  const header = button.parentElement;
  const table = header.closest("table");
  const descending = header.getAttribute("aria-sort") === "ascending";
  for (const other of table.tHead.rows[0].cells) other.setAttribute("aria-sort", "none");
  header.setAttribute("aria-sort", descending ? "descending" : "ascending");
  sortTable(table, header.cellIndex, descending);
});
