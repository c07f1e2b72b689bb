//! Parser unit tests (the integration tests in `tests/` cover the grammar).

use super::*;
use crate::tgsi::opcodes::{ALL, by_name};

#[test]
fn hashed_opcode_lookup_agrees_with_the_table() {
    for op in ALL {
        let name = op.name();
        assert_eq!(names::opcode(name.as_bytes()), by_name(name), "{name}");
        assert_eq!(names::opcode(name.to_ascii_lowercase().as_bytes()), by_name(name), "{name}");
    }
    for word in ["", "MOVE", "MO", "TEX_LZZ", "AAAAAAAAAAAAAAAAAAAAAAAA", "DCL", "IMM"] {
        assert_eq!(names::opcode(word.as_bytes()), None, "{word}");
    }
}

#[test]
fn line_count() {
    for text in ["", "\n", "a\nb\n", "0123456\n\n\n0123456789abcdef\n\nx", "\n\n\n\n\n\n\n\n\n"] {
        assert_eq!(count_lines(text.as_bytes()), text.matches('\n').count(), "{text:?}");
    }
    let bytes: Vec<u8> = (0..=255u8).cycle().take(4099).collect();
    assert_eq!(count_lines(&bytes), bytes.iter().filter(|&&c| c == b'\n').count());
}

#[test]
fn file_lookup_any_case() {
    for f in File::ALL {
        assert_eq!(names::file_any_case(f.name().as_bytes()), Some(f));
        assert_eq!(names::file_any_case(f.name().to_ascii_lowercase().as_bytes()), Some(f));
    }
    assert_eq!(names::file_any_case(b"TEMPS"), None);
    assert_eq!(names::file_any_case(b""), None);
}

#[test]
fn semantic_and_target_tables() {
    for s in SemanticName::ALL {
        assert_eq!(names::semantic(s.name().as_bytes()), Some(s));
    }
    for t in TextureTarget::ALL {
        assert_eq!(names::texture_target(t.name().as_bytes()), Some(t));
    }
    assert_eq!(names::semantic(b"POSITON"), None);
}
