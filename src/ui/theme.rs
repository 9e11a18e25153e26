//! The look of every element, in one place. Colours are the 16 basic ones (the user's
//! terminal theme picks the exact shade), so text stays readable on dark and light
//! backgrounds; code highlighting is the only 256/24-bit colour.

use super::style::{Color, Style};

/// `inline code`.
pub(crate) const CODE: Style = Style::fg(Color::Cyan);
/// Link text.
pub(crate) const LINK: Style = Style::fg(Color::Blue).underline();
/// A link's URL shown after its text.
pub(crate) const URL: Style = Style::fg(Color::Gray);
/// List bullets and numbers.
pub(crate) const BULLET: Style = Style::fg(Color::Yellow);
/// The bar before quoted lines.
pub(crate) const QUOTE_BAR: Style = Style::fg(Color::Gray);
/// Quoted text.
pub(crate) const QUOTE: Style = Style::dimmed().italic();
/// Horizontal rules and table borders.
pub(crate) const RULE: Style = Style::fg(Color::Gray);
/// Table header cells.
pub(crate) const TABLE_HEADER: Style = Style::dimmed().bold();
/// Reasoning ("thinking") text.
pub(crate) const REASONING: Style = Style::dimmed().italic();
/// The `●` before a tool line.
pub(crate) const TOOL_BULLET: Style = Style::fg(Color::Cyan);
/// The tool name.
pub(crate) const TOOL_NAME: Style = Style::dimmed().bold();
/// Previews of successful tool results, notices, the usage line.
pub const SECONDARY: Style = Style::dimmed();
/// Previews of failed tool results.
pub(crate) const FAILED: Style = Style::fg(Color::Red).dim();
pub(crate) const WARNING: Style = Style::fg(Color::Yellow);
pub(crate) const ERROR: Style = Style::fg(Color::Red);
/// The spinner line.
pub const SPINNER: Style = Style::fg(Color::Cyan);
/// Diff lines.
pub(crate) const DIFF_ADD: Style = Style::fg(Color::Green);
pub(crate) const DIFF_DEL: Style = Style::fg(Color::Red);
/// The changed words inside a changed line.
pub(crate) const DIFF_ADD_WORD: Style = Style::fg(Color::Green).reverse();
pub(crate) const DIFF_DEL_WORD: Style = Style::fg(Color::Red).reverse();
pub(crate) const DIFF_CONTEXT: Style = Style::dimmed();
pub(crate) const DIFF_GUTTER: Style = Style::fg(Color::Gray);

/// Headings: level 1 bold underlined, 2 bold, 3 and deeper bold italic; all magenta.
pub(crate) fn heading(level: usize) -> Style {
    let style = Style::fg(Color::Magenta).bold();
    match level {
        1 => style.underline(),
        2 => style,
        _ => style.italic(),
    }
}
