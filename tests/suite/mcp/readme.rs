//! The README's MCP examples are valid configuration.

use std::path::Path;

use agent::config::FileConfig;

/// The ```toml blocks of the README's "MCP servers" section.
fn mcp_section_blocks() -> Vec<String> {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    let start = readme.find("## MCP servers").expect("an MCP section");
    let end = readme[start + 3..]
        .find("\n## ")
        .map_or(readme.len(), |e| start + 3 + e);
    let section = &readme[start..end];
    section
        .split("```toml")
        .skip(1)
        .map(|block| {
            block
                .split("```")
                .next()
                .unwrap()
                .lines()
                .map(str::trim_start)
                .collect::<Vec<_>>()
                .join("\n")
        })
        .collect()
}

#[test]
fn the_readme_examples_parse() {
    let blocks = mcp_section_blocks();
    assert_eq!(blocks.len(), 2);
    let servers = FileConfig::parse(&blocks[0], Path::new("README.md")).unwrap();
    assert_eq!(
        servers.mcp_servers.keys().collect::<Vec<_>>(),
        vec!["docs", "fs"]
    );
    let rules = FileConfig::parse(&blocks[1], Path::new("README.md")).unwrap();
    assert_eq!(rules.permissions.rules.len(), 2);
    assert_eq!(rules.permissions.rules[0].tool, "mcp__fs__*");
}
