//! Matching `old_str` that differs from the file only in indentation (case c-tab-indent-edit).
//!
//! Models often see a file's tabs as spaces, or copy a block at another depth, and then an
//! exact match fails on every indented line. When it does, `str_replace` compares `old_str`
//! with the file line by line, ignoring indentation: the text after each line's indentation
//! must be equal (the first line may start mid-line when it has no indentation of its own, the
//! last may end mid-line), blank lines match blank lines, and the indentation must map the same
//! way on every line: `file = r × old + b`, counted in indentation characters, with one kind of
//! character (tab or space) on each side. That covers spaces sent for tabs and the reverse,
//! 2-space for 4-space, and a block copied at another depth. When a single indented line tells
//! the map, spaces for tabs (or the reverse) scale (`b = 0`) and the same kind shifts
//! (`r = 1`); when none does, `r` comes from each side's unit (a tab, or spaces per level).
//!
//! A single such place is edited there, keeping the file's own indentation: `new_str` is
//! re-indented with the same map, in the file's kind of character, so a tab-indented file never
//! gets space-indented lines. Several places, mixed tabs and spaces, or a `new_str` line whose
//! indentation the map cannot express (half a tab) are refused ([`Outcome`]). Works on the
//! LF-normalized bytes of [`super::matching::Text`]; indentation is ASCII, the rest of a line
//! is compared byte for byte.

/// An indentation character.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Tab,
    Space,
}

impl Kind {
    fn byte(self) -> u8 {
        match self {
            Kind::Tab => b'\t',
            Kind::Space => b' ',
        }
    }

    /// `tabs` or `spaces`.
    pub(crate) fn plural(self) -> &'static str {
        match self {
            Kind::Tab => "tabs",
            Kind::Space => "spaces",
        }
    }
}

/// What matching `old_str` ignoring indentation came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// One place: replace `len` bytes of the normalized view at `start` with `new` (LF line
    /// endings); `lines` are its first and last line (1-based).
    Edit {
        start: usize,
        len: usize,
        new: String,
        lines: (usize, usize),
    },
    /// Several places match (first and last line of each, 1-based).
    Several(Vec<(usize, usize)>),
    /// One place matches, but the indentation cannot be carried over, for this reason.
    Unconvertible {
        lines: (usize, usize),
        reason: String,
    },
    /// Nothing matches, even ignoring indentation.
    Nothing,
}

/// Why the indentation of `old_str`/`new_str` cannot be carried over to the file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub(crate) struct Unfit(pub(crate) String);

impl From<String> for Unfit {
    fn from(message: String) -> Self {
        Self(message)
    }
}

impl From<&str> for Unfit {
    fn from(message: &str) -> Self {
        Self(message.to_string())
    }
}

/// A line split into its indentation and the rest.
fn split(line: &[u8]) -> (&[u8], &[u8]) {
    let at = line
        .iter()
        .position(|b| *b != b' ' && *b != b'\t')
        .unwrap_or(line.len());
    line.split_at(at)
}

/// The kind and width of an indentation; `Err` when it mixes tabs and spaces.
fn measure(lead: &[u8]) -> Result<Option<(Kind, i64)>, ()> {
    let Some(&first) = lead.first() else {
        return Ok(None);
    };
    if lead.iter().any(|b| *b != first) {
        return Err(());
    }
    let kind = if first == b'\t' {
        Kind::Tab
    } else {
        Kind::Space
    };
    Ok(Some((kind, lead.len() as i64)))
}

/// The kind of indentation most indented lines of `norm` use, if any line is indented.
pub(crate) fn file_kind(norm: &[u8]) -> Option<Kind> {
    let (mut tabs, mut spaces) = (0usize, 0usize);
    for line in norm.split(|b| *b == b'\n') {
        match line.first() {
            Some(b'\t') => tabs += 1,
            Some(b' ') if line.iter().any(|b| !b.is_ascii_whitespace()) => spaces += 1,
            _ => {}
        }
    }
    match (tabs, spaces) {
        (0, 0) => None,
        (t, s) if t >= s => Some(Kind::Tab),
        _ => Some(Kind::Space),
    }
}

/// Spaces per level from the widths of space indentations: their greatest common divisor,
/// taken as 4 or 2 when it is a multiple of those (a lone 8-space line is two levels of 4),
/// and 4 when nothing tells.
fn space_unit(widths: impl Iterator<Item = i64>) -> i64 {
    let g = widths.filter(|w| *w > 0).fold(0, gcd);
    match g {
        0 | 1 => 4,
        g if g % 4 == 0 => 4,
        g if g % 2 == 0 => 2,
        g => g,
    }
}

fn gcd(a: i64, b: i64) -> i64 {
    if b == 0 { a.abs() } else { gcd(b, a % b) }
}

/// A place whose text matches `old_str` ignoring indentation.
struct Place {
    /// Index of its first line.
    line: usize,
    start: usize,
    end: usize,
    /// (old indentation, file indentation) of the lines that tell the map.
    pairs: Vec<(Vec<u8>, Vec<u8>)>,
    /// The first line matched mid-line (its indentation is outside the edit).
    mid_line: bool,
}

/// Matches `old_lf` in `norm` ignoring indentation and re-indents `new_lf` (see the module
/// doc). Only meaningful after an exact search found nothing.
pub(crate) fn find(norm: &[u8], old_lf: &str, new_lf: &str) -> Outcome {
    let old: Vec<&[u8]> = old_lf.as_bytes().split(|b| *b == b'\n').collect();
    if old.len() == 1 && split(old[0]).0.is_empty() {
        return Outcome::Nothing;
    }
    let mut lines: Vec<(usize, &[u8])> = Vec::new();
    let mut offset = 0;
    for line in norm.split(|b| *b == b'\n') {
        lines.push((offset, line));
        offset += line.len() + 1;
    }
    let places: Vec<Place> = (0..lines.len())
        .filter_map(|j| place_at(&lines, j, &old))
        .collect();
    let range = |p: &Place| (p.line + 1, p.line + old.len());
    match places.as_slice() {
        [] => Outcome::Nothing,
        [place] => match reindent(norm, place, &old, new_lf) {
            Ok(new) => Outcome::Edit {
                start: place.start,
                len: place.end - place.start,
                new,
                lines: range(place),
            },
            Err(Unfit(reason)) => Outcome::Unconvertible {
                lines: range(place),
                reason,
            },
        },
        several => Outcome::Several(several.iter().map(range).collect()),
    }
}

/// The place starting at line `j` whose lines match `old` ignoring indentation.
fn place_at(lines: &[(usize, &[u8])], j: usize, old: &[&[u8]]) -> Option<Place> {
    let k = old.len();
    if j + k > lines.len() {
        return None;
    }
    let (mut start, mut end) = (lines[j].0, 0);
    let mut pairs = Vec::new();
    let mut mid_line = false;
    for (i, old_line) in old.iter().enumerate() {
        let (offset, file_line) = lines[j + i];
        let (old_lead, old_rest) = split(old_line);
        let (file_lead, file_rest) = split(file_line);
        let last = i == k - 1;
        if i == 0 && old_lead.is_empty() {
            // Starts mid-line (or at an unindented line): the text must end the file line.
            if !file_line.ends_with(old_rest) {
                return None;
            }
            start = offset + file_line.len() - old_rest.len();
            mid_line = true;
        } else if last && old_line.is_empty() {
            // `old_str` ended with a newline: the place ends where this line starts.
            end = offset;
        } else if last {
            if !file_rest.starts_with(old_rest) {
                return None;
            }
            end = offset + file_lead.len() + old_rest.len();
            pairs.push((old_lead.to_vec(), file_lead.to_vec()));
        } else if old_rest.is_empty() {
            if !file_rest.is_empty() {
                return None;
            }
        } else {
            if old_rest != file_rest {
                return None;
            }
            pairs.push((old_lead.to_vec(), file_lead.to_vec()));
        }
        if last && i == 0 {
            // A single line: it starts at its line's start (its indentation is part of it).
            start = offset;
        }
    }
    Some(Place {
        line: j,
        start,
        end,
        pairs,
        mid_line,
    })
}

/// The indentation map `file = p/q × old + b/q`, as (p, q, b·q).
struct Map {
    p: i64,
    q: i64,
    bq: i64,
    file: Kind,
    model: Option<Kind>,
}

impl Map {
    /// The file's width for a model width, when it is a whole number of characters.
    fn apply(&self, old: i64) -> Option<i64> {
        let scaled = self.p * old + self.bq;
        (scaled % self.q == 0 && scaled >= 0).then(|| scaled / self.q)
    }
}

/// Finds the map the place's lines follow, then re-indents `new_lf` with it.
fn reindent(norm: &[u8], place: &Place, old: &[&[u8]], new_lf: &str) -> Result<String, Unfit> {
    let map = fit(norm, place, old, new_lf)?;
    let new: Vec<&[u8]> = new_lf.as_bytes().split(|b| *b == b'\n').collect();
    let mut out: Vec<u8> = Vec::with_capacity(new_lf.len());
    for (i, line) in new.iter().enumerate() {
        if i > 0 {
            out.push(b'\n');
        }
        let (lead, rest) = split(line);
        let last = i == new.len() - 1;
        if line.is_empty() || (i == 0 && place.mid_line) {
            out.extend_from_slice(line);
            continue;
        }
        if rest.is_empty() && !last {
            continue;
        }
        let width = match measure(lead) {
            Err(()) => {
                return Err(format!("line {} of new_str mixes tabs and spaces", i + 1).into());
            }
            Ok(None) => 0,
            Ok(Some((kind, width))) if map.model.is_none_or(|m| m == kind) => width,
            Ok(Some((kind, _))) => {
                return Err(format!(
                    "line {} of new_str is indented with {} but old_str with {}",
                    i + 1,
                    kind.plural(),
                    map.model.map_or("nothing", Kind::plural)
                )
                .into());
            }
        };
        let Some(file_width) = map.apply(width) else {
            return Err(format!(
                "line {} of new_str is indented by {width} characters, which is no whole \
                 number of the file's {}",
                i + 1,
                map.file.plural()
            )
            .into());
        };
        out.extend(std::iter::repeat_n(map.file.byte(), file_width as usize));
        out.extend_from_slice(rest);
    }
    String::from_utf8(out).map_err(|_| Unfit::from("new_str is not valid UTF-8"))
}

/// The map the place's indentation follows (see the module doc).
fn fit(norm: &[u8], place: &Place, old: &[&[u8]], new_lf: &str) -> Result<Map, Unfit> {
    let mixed = |what: &str| format!("{what} mixes tabs and spaces in its indentation");
    let mut model = None;
    let mut file = None;
    let mut points: Vec<(i64, i64)> = Vec::new();
    for (old_lead, file_lead) in &place.pairs {
        let o = measure(old_lead).map_err(|()| mixed("old_str"))?;
        let f = measure(file_lead).map_err(|()| mixed("the file"))?;
        for (seen, now, what) in [(&mut model, o, "old_str"), (&mut file, f, "the file")] {
            if let Some((kind, _)) = now {
                if seen.is_some_and(|k| k != kind) {
                    return Err(mixed(what).into());
                }
                *seen = Some(kind);
            }
        }
        points.push((o.map_or(0, |(_, w)| w), f.map_or(0, |(_, w)| w)));
    }
    let new_leads = new_lf.split('\n').map(|l| split(l.as_bytes()).0);
    if model.is_none() {
        model = new_leads
            .clone()
            .find_map(|lead| measure(lead).ok().flatten().map(|(kind, _)| kind));
    }
    let file = file.or_else(|| file_kind(norm)).unwrap_or(Kind::Space);
    let distinct: Vec<&(i64, i64)> = points
        .iter()
        .filter(|(o, _)| *o != points[0].0)
        .take(1)
        .collect();
    let (p, q) = match (points.first(), distinct.first()) {
        (Some(&(o1, f1)), Some(&&(o2, f2))) => {
            let (p, q) = if o2 > o1 {
                (f2 - f1, o2 - o1)
            } else {
                (f1 - f2, o1 - o2)
            };
            if p <= 0 {
                return Err("its lines are indented differently from the file's lines".into());
            }
            (p, q)
        }
        // One line tells the map: tabs for spaces (or the reverse) scale, the same kind
        // shifts; with no line, each side's unit decides.
        (Some(&(o, f)), None) if o > 0 && f > 0 && model.is_some_and(|m| m != file) => {
            let g = gcd(o, f);
            (f / g, o / g)
        }
        (Some(_), None) if model == Some(file) => (1, 1),
        _ => {
            let unit = |kind: Option<Kind>, widths: Vec<i64>| match kind {
                Some(Kind::Tab) => 1,
                _ => space_unit(widths.into_iter()),
            };
            let model_widths = old
                .iter()
                .map(|l| split(l).0)
                .chain(new_leads)
                .filter_map(|lead| measure(lead).ok().flatten())
                .filter(|(kind, _)| *kind == Kind::Space)
                .map(|(_, w)| w)
                .collect();
            let file_widths = norm
                .split(|b| *b == b'\n')
                .filter_map(|l| measure(split(l).0).ok().flatten())
                .filter(|(kind, _)| *kind == Kind::Space)
                .map(|(_, w)| w)
                .collect();
            (unit(Some(file), file_widths), unit(model, model_widths))
        }
    };
    let bq = points.first().map_or(0, |&(o, f)| f * q - p * o);
    if points.iter().any(|&(o, f)| f * q != p * o + bq) {
        return Err("its lines are not indented consistently with the file's lines".into());
    }
    Ok(Map {
        p,
        q,
        bq,
        file,
        model,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    /// The file after the edit, or the outcome when there is none.
    fn edit(file: &str, old: &str, new: &str) -> Result<String, Outcome> {
        match find(file.as_bytes(), old, new) {
            Outcome::Edit {
                start, len, new, ..
            } => Ok(format!("{}{new}{}", &file[..start], &file[start + len..])),
            other => Err(other),
        }
    }

    const GO: &str = "package main\n\nfunc main() {\n\tif true {\n\t\tprintln(\"a\")\n\t}\n}\n";

    #[test]
    fn spaces_sent_for_a_tab_indented_file() {
        // Case c-tab-indent-edit.
        assert_eq!(
            edit(
                GO,
                "    if true {\n        println(\"a\")",
                "    if true {\n        println(\"b\")"
            ),
            Ok(GO.replace("println(\"a\")", "println(\"b\")"))
        );
        // New lines at other depths, a blank line, and 2-space indentation.
        assert_eq!(
            edit(
                GO,
                "  if true {\n    println(\"a\")\n  }",
                "  if true {\n    println(\"a\")\n\n    if x {\n      y()\n    }\n  }"
            ),
            Ok(GO.replace(
                "\t\tprintln(\"a\")\n",
                "\t\tprintln(\"a\")\n\n\t\tif x {\n\t\t\ty()\n\t\t}\n"
            ))
        );
    }

    #[test]
    fn tabs_sent_for_a_space_indented_file() {
        let py = "def f():\n    if x:\n        return 1\n    return 2\n";
        assert_eq!(
            edit(
                py,
                "\tif x:\n\t\treturn 1",
                "\tif x:\n\t\tlog()\n\t\treturn 1"
            ),
            Ok(py.replace("        return 1\n", "        log()\n        return 1\n"))
        );
        // One indented line: the file's spaces per level come from the file.
        assert_eq!(
            edit(
                py,
                "\t\treturn 1",
                "\t\tif y:\n\t\t\treturn 0\n\t\treturn 1"
            ),
            Ok(py.replace(
                "        return 1\n",
                "        if y:\n            return 0\n        return 1\n"
            ))
        );
    }

    #[test]
    fn other_widths_and_depths() {
        let js = "function f() {\n  if (x) {\n    go();\n  }\n}\n";
        // 4-space levels sent for a 2-space file.
        assert_eq!(
            edit(
                js,
                "    if (x) {\n        go();",
                "    if (x) {\n        stop();\n        go();"
            ),
            Ok(js.replace("    go();\n", "    stop();\n    go();\n"))
        );
        // The block copied without its common indentation (a uniform offset).
        assert_eq!(
            edit(js, "if (x) {\n  go();\n}", "if (x) {\n  go(1);\n}"),
            Ok(js.replace("go();", "go(1);"))
        );
        // Ending with a newline: the next line keeps its own indentation.
        assert_eq!(
            edit(js, "if (x) {\n  go();\n", "if (x) {\n  stop();\n"),
            Ok(js.replace("go();", "stop();"))
        );
        // Mid-line start and end, as an exact match would allow.
        assert_eq!(
            edit(GO, "true {\n    println(\"a", "false {\n    println(\"c"),
            Ok(GO.replace("true {\n\t\tprintln(\"a", "false {\n\t\tprintln(\"c"))
        );
    }

    #[test]
    fn ambiguous_or_unconvertible_edits_are_refused() {
        let twice = "a {\n\tb()\n}\nc {\n\tb()\n}\n";
        assert_eq!(
            find(twice.as_bytes(), "    b()\n}", "    d()\n}"),
            Outcome::Several(vec![(2, 3), (5, 6)])
        );
        let mixed = "f() {\n\t  x()\n\ty()\n}\n";
        assert_eq!(
            find(mixed.as_bytes(), "      x()\n    y()", "z()"),
            Outcome::Unconvertible {
                lines: (2, 3),
                reason: "the file mixes tabs and spaces in its indentation".into()
            }
        );
        assert_eq!(
            find(GO.as_bytes(), "    if true {\n        println(\"a\")", "    if true {\n      println(\"b\")"),
            Outcome::Unconvertible {
                lines: (4, 5),
                reason: "line 2 of new_str is indented by 6 characters, which is no whole number of the file's tabs".into()
            }
        );
        assert_eq!(find(GO.as_bytes(), "println(\"z\")", "x"), Outcome::Nothing);
        assert_eq!(find(GO.as_bytes(), "    if false {", "x"), Outcome::Nothing);
    }
}
