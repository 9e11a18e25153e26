//! Terminal styles as SGR escape sequences, or nothing at all in plain mode.
//!
//! A [`Painter`] is the one place that decides whether escape codes are written: plain mode
//! (`NO_COLOR`, `TERM=dumb`, output not a terminal) paints nothing, so no rendering function
//! can leak an escape code there. Colour depth follows `COLORTERM` (`truecolor`/`24bit` →
//! 24-bit colour, else the xterm 256-colour palette).

use std::fmt::Write;

/// A foreground colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Color {
    Red,
    Green,
    Yellow,
    Blue,
    Magenta,
    Cyan,
    /// Bright black: secondary text that must stay readable on dark and light backgrounds.
    Gray,
    Rgb(u8, u8, u8),
}

/// Text attributes. `Style::default()` is the terminal's default look.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Style {
    pub(crate) fg: Option<Color>,
    pub(crate) bold: bool,
    pub(crate) dim: bool,
    pub(crate) italic: bool,
    pub(crate) underline: bool,
    pub(crate) strike: bool,
    pub(crate) reverse: bool,
}

impl Style {
    pub(crate) const fn fg(color: Color) -> Self {
        Self {
            fg: Some(color),
            bold: false,
            dim: false,
            italic: false,
            underline: false,
            strike: false,
            reverse: false,
        }
    }

    pub(crate) const fn dimmed() -> Self {
        Self {
            dim: true,
            ..Self::fg_none()
        }
    }

    const fn fg_none() -> Self {
        Self {
            fg: None,
            bold: false,
            dim: false,
            italic: false,
            underline: false,
            strike: false,
            reverse: false,
        }
    }

    pub(crate) const fn bold(mut self) -> Self {
        self.bold = true;
        self
    }

    pub(crate) const fn dim(mut self) -> Self {
        self.dim = true;
        self
    }

    pub(crate) const fn italic(mut self) -> Self {
        self.italic = true;
        self
    }

    pub(crate) const fn underline(mut self) -> Self {
        self.underline = true;
        self
    }

    pub(crate) const fn reverse(mut self) -> Self {
        self.reverse = true;
        self
    }

    /// `self` with the attributes of `over` added and its colour, if any, winning.
    pub(crate) fn merge(self, over: Style) -> Style {
        Style {
            fg: over.fg.or(self.fg),
            bold: self.bold || over.bold,
            dim: self.dim || over.dim,
            italic: self.italic || over.italic,
            underline: self.underline || over.underline,
            strike: self.strike || over.strike,
            reverse: self.reverse || over.reverse,
        }
    }

    pub(crate) fn is_default(&self) -> bool {
        *self == Style::default()
    }

    /// The SGR parameters, `;`-separated (empty for the default style).
    fn codes(&self, depth: ColorDepth) -> String {
        let mut codes: Vec<String> = Vec::new();
        for (on, code) in [
            (self.bold, "1"),
            (self.dim, "2"),
            (self.italic, "3"),
            (self.underline, "4"),
            (self.reverse, "7"),
            (self.strike, "9"),
        ] {
            if on {
                codes.push(code.to_string());
            }
        }
        if let Some(color) = self.fg {
            codes.push(color_code(color, depth));
        }
        codes.join(";")
    }
}

fn color_code(color: Color, depth: ColorDepth) -> String {
    match color {
        Color::Red => "31".into(),
        Color::Green => "32".into(),
        Color::Yellow => "33".into(),
        Color::Blue => "34".into(),
        Color::Magenta => "35".into(),
        Color::Cyan => "36".into(),
        Color::Gray => "90".into(),
        Color::Rgb(r, g, b) => match depth {
            ColorDepth::TrueColor => format!("38;2;{r};{g};{b}"),
            ColorDepth::Ansi256 => format!("38;5;{}", ansi256(r, g, b)),
        },
    }
}

/// The nearest colour of the xterm 256-colour palette (6×6×6 cube or grey ramp).
pub(crate) fn ansi256(r: u8, g: u8, b: u8) -> u8 {
    let level = |v: u8| -> u8 {
        if v < 48 {
            0
        } else if v < 115 {
            1
        } else {
            (v - 35) / 40
        }
    };
    let (lr, lg, lb) = (level(r), level(g), level(b));
    let cube = 16 + 36 * lr + 6 * lg + lb;
    let value = |l: u8| if l == 0 { 0 } else { 55 + 40 * u32::from(l) };
    let cube_error = sq(value(lr), r) + sq(value(lg), g) + sq(value(lb), b);
    let average = (u32::from(r) + u32::from(g) + u32::from(b)) / 3;
    let grey_index = if average > 238 {
        23
    } else {
        average.saturating_sub(3) / 10
    };
    let grey = 8 + 10 * grey_index;
    let grey_error = sq(grey, r) + sq(grey, g) + sq(grey, b);
    if grey_error < cube_error {
        // grey_index <= 23, so this fits in a u8.
        232 + u8::try_from(grey_index).unwrap_or(23)
    } else {
        cube
    }
}

fn sq(a: u32, b: u8) -> u32 {
    let d = a.abs_diff(u32::from(b));
    d * d
}

/// How many colours the terminal shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColorDepth {
    Ansi256,
    TrueColor,
}

/// Writes styled text: escape codes when colour is on, the bare text in plain mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Painter {
    depth: Option<ColorDepth>,
}

impl Painter {
    /// No escape codes, ever.
    pub const PLAIN: Painter = Painter { depth: None };

    pub const fn color(depth: ColorDepth) -> Self {
        Self { depth: Some(depth) }
    }

    pub(crate) fn is_plain(&self) -> bool {
        self.depth.is_none()
    }

    /// `text` in `style`, followed by a reset.
    pub fn paint(&self, style: Style, text: &str) -> String {
        let mut out = String::with_capacity(text.len() + 12);
        self.paint_into(&mut out, style, text);
        out
    }

    /// Appends `text` in `style` to `out`.
    pub(crate) fn paint_into(&self, out: &mut String, style: Style, text: &str) {
        match self.depth {
            Some(depth) if !style.is_default() && !text.is_empty() => {
                let _ = write!(out, "\x1b[{}m{text}\x1b[0m", style.codes(depth));
            }
            _ => out.push_str(text),
        }
    }
}

pub(crate) use crate::config::ColorEnv;

impl Painter {
    /// The painter for a stream that is (`is_tty`) or is not a terminal, under `colors`.
    pub(crate) fn for_stream(colors: ColorEnv, is_tty: bool) -> Painter {
        if !is_tty || !colors.allows_color() {
            Painter::PLAIN
        } else if colors.truecolor {
            Painter::color(ColorDepth::TrueColor)
        } else {
            Painter::color(ColorDepth::Ansi256)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_painter_writes_no_escapes() {
        let style = Style::fg(Color::Red).bold();
        assert_eq!(Painter::PLAIN.paint(style, "x"), "x");
        let color = Painter::color(ColorDepth::Ansi256);
        assert_eq!(color.paint(style, "x"), "\x1b[1;31mx\x1b[0m");
        assert_eq!(color.paint(Style::default(), "x"), "x");
    }

    #[test]
    fn rgb_maps_to_palette() {
        assert_eq!(ansi256(0, 0, 0), 16);
        assert_eq!(ansi256(255, 255, 255), 231);
        assert_eq!(ansi256(128, 128, 128), 244);
        assert_eq!(ansi256(255, 0, 0), 196);
        let truecolor = Painter::color(ColorDepth::TrueColor);
        assert_eq!(
            truecolor.paint(Style::fg(Color::Rgb(1, 2, 3)), "x"),
            "\x1b[38;2;1;2;3mx\x1b[0m"
        );
    }

    #[test]
    fn environment_decides() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            ColorEnv::from_lookup(|k| pairs.iter().find(|(key, _)| *key == k).map(|(_, v)| *v))
        };
        let painter = |colors, tty| Painter::for_stream(colors, tty);
        assert!(painter(env(&[("NO_COLOR", "1")]), true).is_plain());
        assert!(!painter(env(&[("NO_COLOR", "")]), true).is_plain());
        assert!(painter(env(&[("TERM", "dumb")]), true).is_plain());
        assert!(painter(env(&[]), false).is_plain());
        assert_eq!(
            painter(env(&[("COLORTERM", "truecolor")]), true),
            Painter::color(ColorDepth::TrueColor)
        );
    }
}
