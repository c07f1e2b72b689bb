//! Self-checks of the generated tables: they agree with Appendix A of the encoding spec (a copy
//! is kept in tests/isa/appendix-a.md), and the committed docs/isa.html is up to date.

use tgsi2va::valhall::reference;
use tgsi2va::valhall::tables::{ENUMS, IMMEDIATES, INSTRUCTION_COUNT, Opcode, SPECIALS};

fn manifest_file(path: &str) -> String {
    let full = format!("{}/{path}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&full).unwrap_or_else(|e| panic!("cannot read {full}: {e}"))
}

#[test]
fn tables_match_appendix_a() {
    let appendix = manifest_file("tests/isa/appendix-a.md");
    let rows: Vec<&str> = appendix.lines().filter(|l| l.starts_with("| `")).collect();
    assert_eq!(rows.len(), INSTRUCTION_COUNT, "Appendix A lists 252 instructions");
    let mut mismatches = Vec::new();
    for (op, row) in Opcode::ALL.iter().zip(&rows) {
        let ours = reference::appendix_row(*op);
        if ours != *row {
            mismatches.push(format!("ours:     {ours}\nappendix: {row}"));
        }
    }
    assert!(mismatches.is_empty(), "{} rows differ:\n{}", mismatches.len(), mismatches.join("\n"));
}

#[test]
fn immediate_table_and_specials() {
    assert_eq!(IMMEDIATES[16].0, 0x3F80_0000);
    assert_eq!(IMMEDIATES[21].0, 0);
    assert_eq!(SPECIALS[3][1].map(|s| s.0), Some("lane_id"));
    assert!(SPECIALS[2].iter().all(Option::is_none));
    let flow = ENUMS.iter().find(|e| e.key == "flow").expect("flow enum");
    assert_eq!(flow.values.len(), 16);
    assert_eq!(flow.display(11), "reserved");
}

#[test]
fn opcode_names_round_trip() {
    for op in Opcode::ALL {
        assert_eq!(Opcode::from_name(op.name()), Some(op));
        assert!(Opcode::with_primary(op.info().primary).contains(&op));
    }
}

#[test]
fn html_reference_is_up_to_date() {
    let committed = manifest_file("docs/isa.html");
    let fresh = reference::html();
    assert!(
        committed == fresh,
        "docs/isa.html is out of date with the ISA tables; regenerate it with\n\n    cargo run -- isa --html -o docs/isa.html\n"
    );
}

#[test]
fn stores_are_the_instructions_named_store() {
    for op in Opcode::ALL {
        assert_eq!(op.is_store(), op.name().starts_with("STORE."), "{}", op.name());
    }
}
