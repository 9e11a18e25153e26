//! Syntax highlighting of fenced code blocks, line by line, with syntect's bundled grammars
//! and the `base16-ocean.dark` theme.
//!
//! Loading the grammars takes tens of milliseconds, so [`warm_up`] starts it on a background
//! thread when a colour terminal is detected; the first code block then finds them ready.
//! Tokens in the theme's default foreground are left in the terminal's own foreground, so
//! plain code stays readable on light backgrounds. Highlighting never fails the output: any
//! syntect error falls back to unhighlighted text.

use std::sync::OnceLock;

use syntect::easy::HighlightLines;
use syntect::highlighting::{Color as SynColor, FontStyle, Theme, ThemeSet};
use syntect::parsing::SyntaxSet;

use super::style::{Color, Painter, Style};

struct Assets {
    syntaxes: SyntaxSet,
    theme: Theme,
}

static ASSETS: OnceLock<Option<Assets>> = OnceLock::new();

fn assets() -> Option<&'static Assets> {
    ASSETS
        .get_or_init(|| {
            let syntaxes = SyntaxSet::load_defaults_newlines();
            let mut themes = ThemeSet::load_defaults();
            let theme = themes.themes.remove("base16-ocean.dark")?;
            Some(Assets { syntaxes, theme })
        })
        .as_ref()
}

/// Loads the grammars on a background thread (once).
pub(crate) fn warm_up() {
    static STARTED: std::sync::Once = std::sync::Once::new();
    STARTED.call_once(|| {
        std::thread::spawn(|| {
            let _ = assets();
        });
    });
}

/// Highlights the lines of one code block in order (the grammar state carries over lines).
pub struct CodeHighlighter {
    state: Option<(HighlightLines<'static>, &'static Assets)>,
    painter: Painter,
}

impl CodeHighlighter {
    /// For the fence's info string `lang` (`rust`, `py`, `sh`, ...); unknown or empty
    /// languages and plain mode give unhighlighted text. Waits for the grammars to load.
    pub fn new(lang: &str, painter: Painter) -> Self {
        Self::with_assets(lang, painter, assets())
    }

    /// Like [`CodeHighlighter::new`], but never waits: while the grammars are still loading
    /// the block is shown unhighlighted (so a chunk is never held up by the loading).
    pub(crate) fn if_ready(lang: &str, painter: Painter) -> Self {
        let ready = ASSETS.get().and_then(Option::as_ref);
        if ready.is_none() {
            warm_up();
        }
        Self::with_assets(lang, painter, ready)
    }

    fn with_assets(lang: &str, painter: Painter, assets: Option<&'static Assets>) -> Self {
        let state = if painter.is_plain() || lang.is_empty() {
            None
        } else {
            assets.and_then(|assets| {
                let syntax = assets
                    .syntaxes
                    .find_syntax_by_token(lang)
                    .or_else(|| assets.syntaxes.find_syntax_by_token(alias(lang)))?;
                Some((HighlightLines::new(syntax, &assets.theme), assets))
            })
        };
        Self { state, painter }
    }

    /// Appends `line` (without its newline) highlighted.
    pub fn line(&mut self, out: &mut String, line: &str) {
        let Some((highlighter, assets)) = self.state.as_mut() else {
            out.push_str(line);
            return;
        };
        let with_newline = format!("{line}\n");
        let Ok(regions) = highlighter.highlight_line(&with_newline, &assets.syntaxes) else {
            out.push_str(line);
            return;
        };
        let default_fg = assets.theme.settings.foreground;
        for (style, piece) in regions {
            let piece = piece.strip_suffix('\n').unwrap_or(piece);
            let mut ours = Style::default();
            if Some(style.foreground) != default_fg {
                ours.fg = Some(rgb(style.foreground));
            }
            ours.bold = style.font_style.contains(FontStyle::BOLD);
            ours.italic = style.font_style.contains(FontStyle::ITALIC);
            self.painter.paint_into(out, ours, piece);
        }
    }
}

fn rgb(color: SynColor) -> Color {
    Color::Rgb(color.r, color.g, color.b)
}

/// Common fence names syntect does not know under that name.
fn alias(lang: &str) -> &str {
    match lang.to_ascii_lowercase().as_str() {
        "shell" | "console" | "zsh" | "bash" => "sh",
        "ts" | "typescript" | "tsx" | "jsx" | "javascript" | "node" => "js",
        "toml" | "ini" | "cfg" => "ini",
        "yml" => "yaml",
        "python3" | "py3" => "py",
        "golang" => "go",
        "c++" => "cpp",
        _ => "txt",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ui::style::ColorDepth;

    #[test]
    fn highlights_known_languages_only_with_colour() {
        let mut out = String::new();
        CodeHighlighter::new("rust", Painter::color(ColorDepth::TrueColor))
            .line(&mut out, "fn main() {}");
        assert!(out.contains("\x1b[") && out.contains("main"), "{out:?}");
        let mut plain = String::new();
        CodeHighlighter::new("rust", Painter::PLAIN).line(&mut plain, "fn main() {}");
        assert_eq!(plain, "fn main() {}");
        let mut unknown = String::new();
        CodeHighlighter::new("no-such-lang", Painter::color(ColorDepth::Ansi256))
            .line(&mut unknown, "x = 1");
        assert_eq!(unknown, "x = 1");
    }
}
