//! GitHub-style tables (`| a | b |` rows with a `|---|:-:|` delimiter row), drawn with
//! aligned columns once the whole table has arrived. A table wider than the terminal is
//! left to the caller to print as its source lines.

use super::inline::{self, Span};
use super::style::{Painter, Style};
use super::{text, theme};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Align {
    Left,
    Center,
    Right,
}

/// The rendered table, or `None` when `rows` is not a table (no delimiter row) or does not
/// fit in `width` columns (0 = any width).
pub(crate) fn render(rows: &[String], width: usize, painter: Painter) -> Option<String> {
    let header = split_row(rows.first()?);
    let aligns: Vec<Align> = split_row(rows.get(1)?)
        .iter()
        .map(|cell| delimiter(cell))
        .collect::<Option<_>>()?;
    let columns = header.len();
    if columns == 0 || aligns.len() != columns {
        return None;
    }
    let mut grid: Vec<Vec<Vec<Span>>> = Vec::new();
    for (i, row) in std::iter::once(&header)
        .chain(
            rows[2..]
                .iter()
                .map(String::as_str)
                .map(split_row)
                .collect::<Vec<_>>()
                .iter(),
        )
        .enumerate()
    {
        let base = if i == 0 {
            theme::TABLE_HEADER
        } else {
            Style::default()
        };
        let mut cells: Vec<Vec<Span>> = row.iter().map(|c| inline::spans(c, base)).collect();
        cells.resize(columns, Vec::new());
        grid.push(cells);
    }
    let widths: Vec<usize> = (0..columns)
        .map(|c| {
            grid.iter()
                .map(|row| spans_width(&row[c]))
                .max()
                .unwrap_or(0)
                .max(3)
        })
        .collect();
    let total = widths.iter().sum::<usize>() + 3 * (columns - 1);
    if width > 0 && total > width {
        return None;
    }
    let bar = painter.paint(theme::RULE, " │ ");
    let mut out = String::new();
    for (i, row) in grid.iter().enumerate() {
        let cells: Vec<String> = row
            .iter()
            .zip(&widths)
            .zip(&aligns)
            .map(|((cell, w), align)| pad(cell, *w, *align, painter))
            .collect();
        out.push_str(cells.join(&bar).trim_end());
        out.push('\n');
        if i == 0 {
            let rule: Vec<String> = widths.iter().map(|w| "─".repeat(*w)).collect();
            out.push_str(&painter.paint(theme::RULE, &rule.join("─┼─")));
            out.push('\n');
        }
    }
    Some(out)
}

/// The cells of a `| a | b |` row: outer bars removed, split on `|` outside code spans and
/// not escaped, trimmed.
fn split_row(row: &str) -> Vec<String> {
    let row = row.trim();
    let row = row.strip_prefix('|').unwrap_or(row);
    let row = if row.ends_with("\\|") {
        row
    } else {
        row.strip_suffix('|').unwrap_or(row)
    };
    let mut cells = Vec::new();
    let mut cell = String::new();
    let mut in_code = false;
    let mut escaped = false;
    for c in row.chars() {
        match c {
            '|' if !in_code && !escaped => cells.push(std::mem::take(&mut cell)),
            '|' if escaped => {
                cell.pop();
                cell.push('|');
            }
            '`' => {
                in_code = !in_code;
                cell.push(c);
            }
            _ => cell.push(c),
        }
        escaped = c == '\\' && !escaped;
    }
    cells.push(cell);
    cells.into_iter().map(|c| c.trim().to_string()).collect()
}

fn delimiter(cell: &str) -> Option<Align> {
    let inner = cell.trim_start_matches(':').trim_end_matches(':');
    if inner.is_empty() || !inner.chars().all(|c| c == '-') {
        return None;
    }
    Some(match (cell.starts_with(':'), cell.ends_with(':')) {
        (true, true) => Align::Center,
        (false, true) => Align::Right,
        _ => Align::Left,
    })
}

fn spans_width(spans: &[Span]) -> usize {
    spans.iter().map(|s| text::width(&s.text)).sum()
}

fn pad(cell: &[Span], width: usize, align: Align, painter: Painter) -> String {
    let room = width.saturating_sub(spans_width(cell));
    let (left, right) = match align {
        Align::Left => (0, room),
        Align::Right => (room, 0),
        Align::Center => (room / 2, room - room / 2),
    };
    let mut out = " ".repeat(left);
    for span in cell {
        painter.paint_into(&mut out, span.style, &span.text);
    }
    out.push_str(&" ".repeat(right));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(lines: &[&str]) -> Vec<String> {
        lines.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn aligns_columns() {
        let table = rows(&[
            "| name | n |",
            "|:-----|--:|",
            "| `a|b` | 1 |",
            "| long name | 22 |",
        ]);
        let got = render(&table, 80, Painter::PLAIN).unwrap();
        assert_eq!(
            got,
            "name      │   n\n──────────┼────\na|b       │   1\nlong name │  22\n"
        );
    }

    #[test]
    fn not_a_table_or_too_wide() {
        assert_eq!(render(&rows(&["| a |", "| b |"]), 80, Painter::PLAIN), None);
        let table = rows(&["| aaaaaaaaaa | bbbbbbbbbb |", "|---|---|"]);
        assert_eq!(render(&table, 10, Painter::PLAIN), None);
    }
}
