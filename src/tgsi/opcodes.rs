//! The TGSI opcode table: the one place every later stage asks about an opcode.
//!
//! It holds every opcode name any Mesa release knew (`tools/tgsi-opcodes.csv`, 330 rows) plus
//! the nine unassigned opcode numbers that Mesa's printer names `UNKnnn` — 339 entries.
//! Removed opcodes and alternative spellings are distinct [`Opcode`] variants, so the parser
//! keeps what was written and the lowering expands it (see [`OpcodeInfo::canonical`] and
//! [`OpcodeInfo::recipe`]).
//!
//! Invariants (checked by the tests below):
//! * `OPCODES[op as usize]` describes `op`, and the table equals the CSV row for row;
//! * every name except `LOAD` and `ENDLOOP` is unique; [`by_name`] returns the current opcode for
//!   those two and the parser chooses the legacy one from context.

#[path = "opcodes_table.rs"]
mod table;

pub use table::{ALL, OPCODES, Opcode};

/// Where an opcode stands in Mesa's history.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// Exists in Mesa 25.0.7.
    Current,
    /// An unassigned opcode number (`UNK67` …); accepted and printed back, does nothing.
    Gap,
    /// Existed once, removed or renamed since.
    Removed,
    /// An alternative spelling accepted by old Mesa (7.5 and the gallium-0.x branches).
    Alias,
}

/// How the result channels relate to the source channels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutputMode {
    /// Channel c of the result depends only on channel c of the sources.
    Componentwise,
    /// One scalar result (from the x channels, or a reduction) written to every enabled channel.
    ReplicatedScalar,
    /// Each result channel has its own formula (LIT, EXP, DST, …).
    ChannelDependent,
    /// Anything else: texture, memory and query opcodes.
    Other,
    /// No destination.
    None,
}

/// The data type an operand carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OperandType {
    /// 32-bit float.
    F,
    /// 32-bit signed integer.
    I,
    /// 32-bit unsigned integer.
    U,
    /// 64-bit float in two channels (xy or zw).
    D,
    /// 64-bit signed integer in two channels.
    I64,
    /// 64-bit unsigned integer in two channels.
    U64,
    /// Bits copied without interpretation.
    X,
    /// A resource register (BUFFER, IMAGE, MEMORY, HWATOMIC, CONSTBUF).
    Res,
    /// A sampler view (SVIEW).
    Sview,
    /// A sampler (SAMP).
    Samp,
}

/// The control-flow role of an opcode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FlowRole {
    Kill,
    Call,
    Return,
    If,
    Else,
    EndIf,
    Break,
    Continue,
    Emit,
    LoopBegin,
    LoopEnd,
    SubBegin,
    SubEnd,
    Barrier,
    End,
    Switch,
    Case,
    Default,
    EndSwitch,
    /// Legacy unstructured branch (BRA).
    Branch,
}

/// The printer's indentation effect.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Indent {
    None,
    /// One level deeper after this instruction (IF, UIF, BGNLOOP, BGNSUB).
    After,
    /// One level shallower before this instruction (ENDIF, ENDLOOP, ENDSUB).
    Before,
    /// Both (ELSE).
    BeforeAndAfter,
}

/// A set of shader stages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StageMask(pub u8);

impl StageMask {
    pub const VS: StageMask = StageMask(1 << 0);
    pub const TCS: StageMask = StageMask(1 << 1);
    pub const TES: StageMask = StageMask(1 << 2);
    pub const GS: StageMask = StageMask(1 << 3);
    pub const FS: StageMask = StageMask(1 << 4);
    pub const CS: StageMask = StageMask(1 << 5);
    pub const ALL: StageMask = StageMask(0x3f);
    pub const CS_TCS: StageMask = StageMask(Self::CS.0 | Self::TCS.0);

    pub fn contains(self, other: StageMask) -> bool {
        self.0 & other.0 == other.0
    }
}

/// Everything known about one opcode.
#[derive(Debug)]
pub struct OpcodeInfo {
    /// Mnemonic as written (upper case).
    pub name: &'static str,
    pub status: Status,
    /// Current opcode number, or the number it had when it last existed.
    pub number: u16,
    pub introduced_in: &'static str,
    /// First release without it (empty for current opcodes).
    pub removed_in: &'static str,
    pub num_dst: u8,
    pub num_src: u8,
    pub output_mode: OutputMode,
    /// The mode was inferred: Mesa's table of the time had no mode field.
    pub output_mode_inferred: bool,
    /// Meaning of each source (empty when it has none).
    pub src_types: &'static [OperandType],
    /// Meaning of each destination.
    pub dst_types: &'static [OperandType],
    /// A texture-target operand follows the sources.
    pub has_texture_target: bool,
    /// Up to four texture offsets may follow (texture opcodes and SAMPLE…GATHER4).
    pub has_texture_offsets: bool,
    /// Trailing memory qualifiers / target / format items are parsed (opcodes 161–176, RESQ).
    pub has_memory_items: bool,
    /// A `:N` branch label is accepted.
    pub has_branch_label: bool,
    pub flow: Option<FlowRole>,
    pub indent: Indent,
    pub stages: StageMask,
    /// Implicit-LOD texturing: only well defined in fragment shaders.
    pub implicit_lod: bool,
    /// For aliases and renamed opcodes: the opcode it stands for.
    pub canonical: Option<Opcode>,
    /// Operand list as written, e.g. `DST, SRC, SRC, TARGET [, OFFSET]{0..4}`.
    pub operands: &'static str,
    /// For aliases the canonical name; for removed opcodes a lowering recipe in current opcodes.
    pub recipe: &'static str,
    /// One-line description of the operation.
    pub semantics: &'static str,
}

impl Opcode {
    /// The table row of this opcode.
    pub fn info(self) -> &'static OpcodeInfo {
        &OPCODES[self as usize]
    }

    /// The mnemonic as Mesa prints it.
    pub fn name(self) -> &'static str {
        self.info().name
    }

    /// The opcode this one stands for: itself unless it is an alias or a plain rename.
    pub fn canonical(self) -> Opcode {
        self.info().canonical.unwrap_or(self)
    }
}

/// Case-insensitive lookup of a mnemonic. Returns the current opcode for `LOAD` and `ENDLOOP`.
pub fn by_name(name: &str) -> Option<Opcode> {
    let bytes = name.as_bytes();
    if bytes.len() > 16 {
        return None;
    }
    let mut upper = [0u8; 16];
    for (dst, src) in upper.iter_mut().zip(bytes) {
        *dst = src.to_ascii_uppercase();
    }
    table::by_upper_name(&upper[..bytes.len()])
}

/// The current opcode whose number is `number`, or the gap name at that number.
pub fn by_number(number: u16) -> Option<Opcode> {
    ALL.iter()
        .copied()
        .find(|op| op.info().number == number && matches!(op.info().status, Status::Current | Status::Gap))
}

/// The known mnemonic closest to `word` by edit distance, for "did you mean" notes.
pub fn closest(word: &str) -> Option<Opcode> {
    let word = word.to_ascii_uppercase();
    let limit = (word.len() / 3).max(1);
    ALL.iter()
        .copied()
        .filter(|op| op.info().status != Status::Gap)
        .map(|op| (edit_distance(&word, op.name()), op))
        .filter(|&(d, _)| d <= limit)
        .min_by_key(|&(d, op)| (d, op.info().status != Status::Current))
        .map(|(_, op)| op)
}

/// Levenshtein distance over bytes.
pub fn edit_distance(a: &str, b: &str) -> usize {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, &ca) in a.iter().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let substitution = diagonal + usize::from(ca != cb);
            diagonal = row[j + 1];
            row[j + 1] = substitution.min(row[j] + 1).min(row[j + 1] + 1);
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The committed table must equal the CSV it is generated from.
    #[test]
    fn table_matches_csv() {
        let csv = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tools/tgsi-opcodes.csv")).unwrap();
        let rows: Vec<Vec<String>> = csv.lines().skip(1).map(split_csv_line).collect();
        assert_eq!(rows.len(), 330);
        let non_gap: Vec<&OpcodeInfo> = OPCODES.iter().filter(|i| i.status != Status::Gap).collect();
        assert_eq!(non_gap.len(), rows.len());
        for (row, info) in rows.iter().zip(non_gap) {
            assert_eq!(row[0], info.name);
            assert_eq!(row[6].parse::<u8>().unwrap_or(0), info.num_dst, "{}", info.name);
            assert_eq!(row[7].parse::<u8>().unwrap_or(0), info.num_src, "{}", info.name);
            assert_eq!(row[3].parse::<u16>().unwrap(), info.number, "{}", info.name);
            assert_eq!(row[14] == "1", info.has_texture_target, "{}", info.name);
            assert_eq!(row[16] == "1", info.has_memory_items, "{}", info.name);
            assert_eq!(row[17] == "1", info.has_branch_label, "{}", info.name);
            assert_eq!(row[23], info.semantics, "{}", info.name);
            let src_count = if row[10].is_empty() { 0 } else { row[10].split(',').count() };
            assert_eq!(src_count, info.src_types.len(), "{}", info.name);
        }
    }

    fn split_csv_line(line: &str) -> Vec<String> {
        let mut fields = vec![String::new()];
        let mut quoted = false;
        let mut chars = line.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '"' if quoted && chars.peek() == Some(&'"') => {
                    chars.next();
                    fields.last_mut().unwrap().push('"');
                }
                '"' => quoted = !quoted,
                ',' if !quoted => fields.push(String::new()),
                _ => fields.last_mut().unwrap().push(c),
            }
        }
        fields
    }

    #[test]
    fn discriminant_indexes_table() {
        for (i, &op) in ALL.iter().enumerate() {
            assert_eq!(op as usize, i);
            assert_eq!(by_name(op.name()).map(|o| o.name()), Some(op.name()));
        }
        assert_eq!(by_name("mov"), Some(Opcode::Mov));
        assert_eq!(by_name("Tex_Lz"), Some(Opcode::TexLz));
        assert_eq!(by_name("LOAD"), Some(Opcode::Load));
        assert_eq!(by_name("ENDLOOP"), Some(Opcode::Endloop));
        assert_eq!(by_name("MOVE"), None);
    }

    #[test]
    fn numbers_of_current_opcodes_are_unique_and_gaps_filled() {
        for n in 0..=251u16 {
            let op = by_number(n).unwrap_or_else(|| panic!("no opcode numbered {n}"));
            assert_eq!(op.info().number, n);
        }
        assert_eq!(by_number(67), Some(Opcode::Unk67));
        assert_eq!(by_number(212), Some(Opcode::Unk212));
    }

    #[test]
    fn canonical_names() {
        assert_eq!(Opcode::Sgn.canonical(), Opcode::Ssg);
        assert_eq!(Opcode::Kil.canonical(), Opcode::KillIf);
        assert_eq!(Opcode::Texkill.canonical(), Opcode::KillIf);
        assert_eq!(Opcode::Recip.canonical(), Opcode::Rcp);
        assert_eq!(Opcode::Sub.canonical(), Opcode::Sub, "SUB has a recipe, not a rename");
        assert_eq!(Opcode::LoadLegacy.canonical(), Opcode::SampleI);
    }

    #[test]
    fn suggestions() {
        assert_eq!(closest("MOVE"), Some(Opcode::Mov));
        assert_eq!(closest("TEXX"), Some(Opcode::Tex));
        assert_eq!(closest("QQQQQQQQ"), None);
    }
}
