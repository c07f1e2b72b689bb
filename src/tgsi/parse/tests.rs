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
fn word_wide_identifier_length_agrees_with_the_byte_table() {
    // Every byte value at every position behind a run of identifier bytes of each kind.
    for run in [b'a', b'Z', b'0', b'9', b'_'] {
        for at in 0..8 {
            for c in 0..=255u8 {
                let mut bytes = [run; 8];
                bytes[at] = c;
                let expected = bytes.iter().take_while(|&&b| is_ident(b)).count();
                assert_eq!(ident_len(u64::from_le_bytes(bytes)), expected, "{bytes:?}");
            }
        }
    }
    assert_eq!(ident_len(0), 0);
}

#[test]
fn word_wide_upper_case_agrees_with_the_byte_function() {
    for at in 0..8 {
        for c in 0..=255u8 {
            let mut bytes = *b"aZ_9mq`{";
            bytes[at] = c;
            let expected = bytes.map(|b| b.to_ascii_uppercase());
            assert_eq!(ascii_upper(u64::from_le_bytes(bytes)).to_le_bytes(), expected, "{bytes:?}");
        }
    }
}

#[test]
fn word_loads_pad_with_zeros() {
    let text = b"0123456789";
    assert_eq!(load8(text, 0), u64::from_le_bytes(*b"01234567"));
    assert_eq!(load8(text, 4), u64::from_le_bytes(*b"456789\0\0"));
    assert_eq!(load8(text, 9), u64::from(b'9'));
    assert_eq!(load8(text, 10), 0);
    assert_eq!(load8(text, usize::MAX), 0);
    assert_eq!(low_bytes(0), 0);
    assert_eq!(low_bytes(3), 0xff_ffff);
    assert_eq!(low_bytes(8), u64::MAX);
}

/// The keyword test reads one word: the keyword must be a whole identifier in any case, and
/// the text may end right after it.
#[test]
fn statement_keywords_are_whole_identifiers() {
    let keyword = |text: &str| match statement_keyword(text.as_bytes(), 0) {
        Some(Keyword::Dcl) => "DCL",
        Some(Keyword::Imm) => "IMM",
        Some(Keyword::Property) => "PROPERTY",
        None => "-",
    };
    for (text, expected) in [
        ("DCL TEMP[0]", "DCL"),
        ("dcl", "DCL"),
        ("DcL[", "DCL"),
        ("IMM[0] FLT32", "IMM"),
        ("imm\n", "IMM"),
        ("PROPERTY NEXT_SHADER", "PROPERTY"),
        ("property", "PROPERTY"),
        ("DCLX", "-"),
        ("DCL_", "-"),
        ("DCL0", "-"),
        ("IMMX[0..1]", "-"),
        ("DC", "-"),
        ("PROPERTY_", "-"),
        ("PROPERTIES", "-"),
        ("PROPERT", "-"),
        ("MOV", "-"),
        ("", "-"),
    ] {
        assert_eq!(keyword(text), expected, "{text:?}");
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

/// The source and write-mask fast paths give what the general path gives: each operand is
/// parsed as written (fast path) and with a blank before its `.` (general path only).
#[test]
fn operand_fast_paths_agree_with_the_general_path() {
    let sources = [
        "TEMP[1].xyzw",
        "-TEMP[1].wzyx",
        "|CONST[0][3].xxxx|",
        "-|IN[2].XyZw|",
        "CONST[1][2].yyyy",
        "IMM[0].zwxy",
        "SV[0].xxxx",
        "SAMP[0]",
        "-TEMP[2]",
        "|TEMP[3]|",
        "temp[00012].xyzw",
        "Const[0][32767].xxxx",
        "ImAgE[0]",
        "sview[1]",
        "ADDR[0].xxxx",
        "BUFFER[3]",
        "in[000001]",
        "TEMP[1](2).xxxx",
    ];
    let masks = [".x", ".xz", ".yzw", ".xyzw", ".W", ""];
    for source in sources {
        for mask in masks {
            let fast = format!("FRAG\nMAD OUT[0]{mask}, {source}, {source}, {source}\nEND\n");
            let spaced =
                if source.contains('.') { source.replacen('.', " .", 1) } else { source.replacen('[', " [", 1) };
            let spaced_mask = mask.replacen('.', " .", 1);
            let general = format!("FRAG\nMAD OUT[0]{spaced_mask}, {spaced}, {spaced}, {spaced}\nEND\n");
            let mut a = parse(&fast).unwrap_or_else(|e| panic!("{fast}: {e:?}"));
            let mut b = parse(&general).unwrap_or_else(|e| panic!("{general}: {e:?}"));
            a.clear_spans();
            b.clear_spans();
            assert_eq!(a, b, "{fast}");
        }
    }
    // Shapes the fast paths must leave to the general path, with its answer or its error.
    for (text, ok) in [
        ("MOV OUT[0], |-TEMP[0].xyzw|", true),
        ("MOV OUT[0], -(TEMP[0].xyzw)", true),
        ("MOV OUT[0], TEMP[0].xyzw.xyzw", true),
        ("MOV OUT[0].xx, TEMP[0].xyzw", false),
        ("MOV OUT[0].xyzwx, TEMP[0].xyzw", false),
        ("MOV OUT[0].yx, TEMP[0].xyzw", false),
        ("MOV OUT[0], TEMP[0].xyzwx", false),
        ("MOV OUT[0], |TEMP[0].xyzw", false),
        ("MOV OUT[0], TEMP{0].xyzw", false),
        ("MOV OUT[0], TEMP[0}.xyzw", false),
        ("MOV OUT[0], TEMP[32768].xyzw", false),
        ("MOV OUT[0], TEMP[99999999999].xyzw", false),
        ("MOV OUT[0], TEMP[].xyzw", false),
        ("MOV OUT[0], TEMP[0", false),
        ("MOV OUT[0], TEMP", false),
        ("MOV OUT[0], TEMQ[0]", false),
        ("MOV OUT[0], TE[0]", false),
        ("MOV OUT[0], TEMPS[0]", false),
        ("mov out[0], temp[0]", true),
    ] {
        let text = format!("FRAG\n{text}\nEND\n");
        assert_eq!(parse(&text).is_ok(), ok, "{text}");
    }
}

/// Declarations read by the fast paths (file name and `[a..b]` as Mesa prints them) give what
/// the general path gives for the same declaration written with blanks; malformed ranges still
/// get the general path's errors.
#[test]
fn declaration_fast_paths_agree_with_the_general_path() {
    for (fast, spaced) in [
        ("DCL TEMP[0..3], LOCAL", "DCL TEMP [ 0 .. 3 ] , LOCAL"),
        ("DCL temp[7]", "DCL TEMP [7]"),
        ("DCL CONST[1][0..65535]", "DCL CONST [1] [ 0..65535 ]"),
        ("DCL IN[00012], GENERIC[3], PERSPECTIVE", "DCL IN [ 12 ], GENERIC[3], PERSPECTIVE"),
        ("DCL SVIEW[2], 2D, FLOAT", "DCL SVIEW [2], 2D, FLOAT"),
        ("DCL SAMP[0]", "DCL SAMP [ 0 ]"),
        ("DCL ImAgE[0], 2D, PIPE_FORMAT_R8G8B8A8_UNORM", "DCL IMAGE [0], 2D, PIPE_FORMAT_R8G8B8A8_UNORM"),
        ("DCL BUFFER[1]", "DCL BUFFER [1]"),
        // Attributes may follow on the next lines (white space includes line breaks).
        ("DCL OUT[0], POSITION", "DCL OUT[0]\n, POSITION"),
        ("DCL TEMP[0..3], LOCAL", "DCL TEMP[0..3]\n\n  ,\nLOCAL"),
        ("DCL IN[1].xy, GENERIC[0]", "DCL IN[1]\n.xy\n, GENERIC[0]"),
    ] {
        let mut a = parse(&format!("FRAG\n{fast}\nEND\n")).unwrap_or_else(|e| panic!("{fast}: {e:?}"));
        let mut b = parse(&format!("FRAG\n{spaced}\nEND\n")).unwrap_or_else(|e| panic!("{spaced}: {e:?}"));
        a.clear_spans();
        b.clear_spans();
        assert_eq!(a, b, "{fast}");
    }
    for text in [
        "DCL TEMP[3..1]",
        "DCL TEMP[0..65536]",
        "DCL TEMP[65536]",
        "DCL TEMP[123456]",
        "DCL TEMP[0...3]",
        "DCL TEMP[0..]",
        "DCL TEMP[0",
        "DCL TEMP{0]",
        "DCL TEMPS[0]",
    ] {
        assert!(parse(&format!("FRAG\n{text}\nEND\n")).is_err(), "{text}");
    }
}
