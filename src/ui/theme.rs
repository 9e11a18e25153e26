//! The look of every element, in one place. Colours are the 16 basic ones (the user's
//! terminal theme picks the exact shade), so text stays readable on dark and light
//! backgrounds; code highlighting is the only 256/24-bit colour.

use super::style::{Color, Style};

/// `inline code`.
pub const CODE: Style = Style::fg(Color::Cyan);
/// Link text.
pub const LINK: Style = Style::fg(Color::Blue).underline();
/// A link's URL shown after its text.
pub const URL: Style = Style::fg(Color::Gray);
/// List bullets and numbers.
pub const BULLET: Style = Style::fg(Color::Yellow);
/// The bar before quoted lines.
pub const QUOTE_BAR: Style = Style::fg(Color::Gray);
/// Quoted text.
pub const QUOTE: Style = Style::dimmed().italic();
/// Horizontal rules and table borders.
pub const RULE: Style = Style::fg(Color::Gray);
/// Table header cells.
pub const TABLE_HEADER: Style = Style::dimmed().bold();
/// Reasoning ("thinking") text.
pub const REASONING: Style = Style::dimmed().italic();
/// The `●` before a tool line.
pub const TOOL_BULLET: Style = Style::fg(Color::Cyan);
/// The tool name.
pub const TOOL_NAME: Style = Style::dimmed().bold();
/// Previews of successful tool results, notices, the usage line.
pub const SECONDARY: Style = Style::dimmed();
/// Previews of failed tool results.
pub const FAILED: Style = Style::fg(Color::Red).dim();
pub const WARNING: Style = Style::fg(Color::Yellow);
pub const ERROR: Style = Style::fg(Color::Red);
/// The spinner line.
pub const SPINNER: Style = Style::fg(Color::Cyan);
/// Diff lines.
pub const DIFF_ADD: Style = Style::fg(Color::Green);
pub const DIFF_DEL: Style = Style::fg(Color::Red);
/// The changed words inside a changed line.
pub const DIFF_ADD_WORD: Style = Style::fg(Color::Green).reverse();
pub const DIFF_DEL_WORD: Style = Style::fg(Color::Red).reverse();
pub const DIFF_CONTEXT: Style = Style::dimmed();
pub const DIFF_GUTTER: Style = Style::fg(Color::Gray);

/// Headings: level 1 bold underlined, 2 bold, 3 and deeper bold italic; all magenta.
pub fn heading(level: usize) -> Style {
    let style = Style::fg(Color::Magenta).bold();
    match level {
        1 => style.underline(),
        2 => style,
        _ => style.italic(),
    }
}
