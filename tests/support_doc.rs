//! docs/tgsi-support.md must equal what the compiler does today (`BLESS=1` rewrites it).

#[test]
fn support_page_is_current() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/tgsi-support.md");
    let expected = tgsi2va::lower::support::report();
    if std::env::var_os("BLESS").is_some() {
        std::fs::write(path, &expected).unwrap();
        return;
    }
    let actual = std::fs::read_to_string(path).unwrap_or_default();
    pretty_assertions::assert_eq!(
        actual,
        expected,
        "docs/tgsi-support.md is stale: run `BLESS=1 cargo test --test support_doc` and review the diff"
    );
}
