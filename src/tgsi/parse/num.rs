//! Number syntax of the TGSI text format: C `strtof`/`strtod`/`strtoll`/`strtoull` as Mesa
//! uses them, implemented without the C library and without allocation.
//!
//! The scanners return how many bytes the C function would consume (0 when it would accept
//! nothing), so the caller can report precise spans.

use nom::IResult;
use nom::bytes::complete::take_while;

/// The longest run of ASCII digits at the start of `s` (nom's `take_while` over bytes).
pub fn digits(s: &[u8]) -> &[u8] {
    let result: IResult<&[u8], &[u8]> = take_while(|c: u8| c.is_ascii_digit())(s);
    match result {
        Ok((_, run)) => run,
        Err(_) => &[],
    }
}

/// The decimal value of a digit run, saturating at `u64::MAX` (linear in the run's length).
pub fn decimal_value(run: &[u8]) -> u64 {
    let mut value: u64 = 0;
    for &d in run {
        value = value.saturating_mul(10).saturating_add(u64::from(d - b'0'));
    }
    value
}

fn hex_digit(c: u8) -> Option<u32> {
    (c as char).to_digit(16)
}

/// Length of the longest prefix of `s` that C `strtod` accepts (no leading white space), or 0.
pub fn scan_c_float(s: &[u8]) -> usize {
    let mut i = 0;
    if matches!(s.first(), Some(b'+' | b'-')) {
        i = 1;
    }
    let rest = &s[i..];
    if starts_with_ignore_case(rest, b"infinity") {
        return i + 8;
    }
    if starts_with_ignore_case(rest, b"inf") {
        return i + 3;
    }
    if starts_with_ignore_case(rest, b"nan") {
        let mut j = i + 3;
        if s.get(j) == Some(&b'(') {
            let mut k = j + 1;
            while s.get(k).is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_') {
                k += 1;
            }
            if s.get(k) == Some(&b')') {
                j = k + 1;
            }
        }
        return j;
    }
    if rest.len() >= 2 && rest[0] == b'0' && (rest[1] | 0x20) == b'x' {
        let mut j = i + 2;
        let mut any = false;
        while s.get(j).is_some_and(|c| c.is_ascii_hexdigit()) {
            j += 1;
            any = true;
        }
        if s.get(j) == Some(&b'.') {
            j += 1;
            while s.get(j).is_some_and(|c| c.is_ascii_hexdigit()) {
                j += 1;
                any = true;
            }
        }
        if !any {
            // strtod reads just the "0".
            return i + 1;
        }
        return j + exponent_len(&s[j..], b'p');
    }
    let mut j = i;
    let int_digits = digits(&s[j..]).len();
    j += int_digits;
    let mut frac_digits = 0;
    if s.get(j) == Some(&b'.') {
        frac_digits = digits(&s[j + 1..]).len();
        if int_digits + frac_digits > 0 {
            j += 1 + frac_digits;
        }
    }
    if int_digits + frac_digits == 0 {
        return 0;
    }
    j + exponent_len(&s[j..], b'e')
}

/// Length of an exponent part `e[+-]digits` / `p[+-]digits` at the start of `s`, or 0.
fn exponent_len(s: &[u8], letter: u8) -> usize {
    if s.first().is_some_and(|c| c | 0x20 == letter) {
        let mut k = 1;
        if matches!(s.get(1), Some(b'+' | b'-')) {
            k = 2;
        }
        let n = digits(&s[k.min(s.len())..]).len();
        if n > 0 {
            return k + n;
        }
    }
    0
}

fn starts_with_ignore_case(s: &[u8], word: &[u8]) -> bool {
    s.len() >= word.len() && s[..word.len()].eq_ignore_ascii_case(word)
}

/// Binary floating-point formats we convert to.
#[derive(Clone, Copy)]
struct FloatFormat {
    mantissa_bits: u32,
    bias: i32,
    exponent_all_ones: u64,
}

const F32: FloatFormat = FloatFormat { mantissa_bits: 23, bias: 127, exponent_all_ones: 0xff };
const F64: FloatFormat = FloatFormat { mantissa_bits: 52, bias: 1023, exponent_all_ones: 0x7ff };

/// Converts a text that [`scan_c_float`] accepted in full to the bit pattern of an IEEE
/// binary32 (`strtof`), correctly rounded.
pub fn c_float_to_f32_bits(text: &[u8]) -> Option<u32> {
    convert(text, F32).map(|bits| bits as u32)
}

/// As [`c_float_to_f32_bits`] for binary64 (`strtod`).
pub fn c_float_to_f64_bits(text: &[u8]) -> Option<u64> {
    convert(text, F64)
}

/// `[-]d+.d*` with at most 7 digits at the start of `s`, read as `strtof` would when the next
/// byte cannot continue the number (no exponent, no more digits): the bit pattern and the
/// length. `m / 10^k` in binary32 with one rounding is the correctly rounded result because
/// both operands are exact (Clinger's fast path). This is the shape of everything Mesa prints
/// with `%10.4f`; `None` sends anything else to the general conversion.
pub fn short_decimal_f32(s: &[u8]) -> Option<(u32, usize)> {
    const POW10: [f32; 8] = [1.0, 10.0, 100.0, 1e3, 1e4, 1e5, 1e6, 1e7];
    let negative = s.first() == Some(&b'-');
    let mut i = usize::from(negative);
    let mut mantissa: u32 = 0;
    // The integer digits, then the fraction's: two plain loops (no per-byte state for the
    // point), each digit counted against the limit of seven.
    let digits_start = i;
    while let Some(d) = s.get(i).map(|c| c.wrapping_sub(b'0')).filter(|&d| d <= 9) {
        mantissa = mantissa * 10 + u32::from(d);
        i += 1;
        if i - digits_start > 7 {
            return None;
        }
    }
    let mut digits = i - digits_start;
    let mut scale = 0;
    if s.get(i) == Some(&b'.') {
        i += 1;
        let fraction_start = i;
        while let Some(d) = s.get(i).map(|c| c.wrapping_sub(b'0')).filter(|&d| d <= 9) {
            mantissa = mantissa * 10 + u32::from(d);
            i += 1;
            if digits + (i - fraction_start) > 7 {
                return None;
            }
        }
        scale = i - fraction_start;
        digits += scale;
    }
    // An exponent, a hex prefix or a second `.` is for the general conversion.
    if digits == 0 || s.get(i).is_some_and(|&c| matches!(c | 0x20, b'e' | b'x' | b'p') || c == b'.') {
        return None;
    }
    let value = mantissa as f32 / POW10[scale];
    Some((if negative { (-value).to_bits() } else { value.to_bits() }, i))
}

fn convert(text: &[u8], format: FloatFormat) -> Option<u64> {
    if format.mantissa_bits == 23
        && let Some((bits, len)) = short_decimal_f32(text)
        && len == text.len()
    {
        return Some(u64::from(bits));
    }
    let (negative, body) = match text.first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    let sign = if negative { 1u64 << (format.mantissa_bits + exponent_width(format)) } else { 0 };
    let magnitude = if starts_with_ignore_case(body, b"nan") {
        // Quiet NaN, no payload (glibc ignores the n-char sequence for the payload only
        // partially; Mesa never prints one).
        (format.exponent_all_ones << format.mantissa_bits) | (1u64 << (format.mantissa_bits - 1))
    } else if starts_with_ignore_case(body, b"inf") {
        format.exponent_all_ones << format.mantissa_bits
    } else if body.len() >= 2 && body[0] == b'0' && (body[1] | 0x20) == b'x' {
        hex_float(&body[2..], format)?
    } else {
        let s = std::str::from_utf8(body).ok()?;
        if format.mantissa_bits == 23 {
            u64::from(s.parse::<f32>().ok()?.to_bits())
        } else {
            s.parse::<f64>().ok()?.to_bits()
        }
    };
    Some(sign | magnitude)
}

fn exponent_width(format: FloatFormat) -> u32 {
    64 - format.exponent_all_ones.leading_zeros()
}

/// `hexdigits[.hexdigits][p[+-]digits]` (after the `0x`) to a correctly rounded magnitude.
fn hex_float(s: &[u8], format: FloatFormat) -> Option<u64> {
    let mut mantissa: u64 = 0;
    let mut sticky = false;
    let mut exponent: i64 = 0;
    let mut seen_point = false;
    let mut i = 0;
    while i < s.len() {
        let c = s[i];
        if c == b'.' && !seen_point {
            seen_point = true;
        } else if let Some(d) = hex_digit(c) {
            if mantissa >> 60 == 0 {
                mantissa = mantissa << 4 | u64::from(d);
                if seen_point {
                    exponent -= 4;
                }
            } else {
                sticky |= d != 0;
                if !seen_point {
                    exponent += 4;
                }
            }
        } else {
            break;
        }
        i += 1;
    }
    if i < s.len() {
        let rest = &s[i + 1..];
        let (negative, run) = match rest.first() {
            Some(b'-') => (true, digits(&rest[1..])),
            Some(b'+') => (false, digits(&rest[1..])),
            _ => (false, digits(rest)),
        };
        let value = decimal_value(run).min(1 << 40) as i64;
        exponent = if negative { exponent - value } else { exponent + value };
    }
    Some(round_binary(mantissa, sticky, exponent, format))
}

/// Rounds `mantissa * 2^exponent` (plus a sticky bit below the mantissa) to the nearest
/// representable magnitude, ties to even; returns the bit pattern without sign.
fn round_binary(mantissa: u64, sticky: bool, exponent: i64, format: FloatFormat) -> u64 {
    if mantissa == 0 {
        return 0;
    }
    let lz = i64::from(mantissa.leading_zeros());
    // value = 1.f * 2^e
    let e = exponent + 63 - lz;
    let min_exponent = 1 - i64::from(format.bias);
    let max_exponent = i64::from(format.bias);
    if e > max_exponent {
        return format.exponent_all_ones << format.mantissa_bits;
    }
    let normalized = u128::from(mantissa << lz) << 64; // top bit at 127
    // Bits to keep: mantissa_bits + 1, fewer for subnormals.
    let extra = (min_exponent - e).max(0);
    let shift = 127 - i64::from(format.mantissa_bits) + extra;
    if shift > 128 {
        return 0;
    }
    let shift = shift as u32;
    let (kept, remainder) =
        if shift == 128 { (0u128, normalized) } else { (normalized >> shift, normalized & ((1u128 << shift) - 1)) };
    let half = 1u128 << (shift - 1);
    let mut kept = kept as u64;
    let above_half = remainder > half || (remainder == half && sticky);
    if remainder >= half && (above_half || kept & 1 == 1) {
        kept += 1;
    }
    if extra > 0 {
        // Subnormal (or rounded up to the smallest normal): the bits are the mantissa itself.
        return kept;
    }
    let biased = (e + i64::from(format.bias)) as u64;
    let bits = (biased << format.mantissa_bits) + kept - (1u64 << format.mantissa_bits);
    if bits >> format.mantissa_bits >= format.exponent_all_ones {
        return format.exponent_all_ones << format.mantissa_bits;
    }
    bits
}

/// Result of scanning an integer the way C `strtoll(…, 0)`/`strtoull(…, 0)` do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CInteger {
    pub negative: bool,
    /// The magnitude, or `None` when it exceeds `u64::MAX`.
    pub magnitude: Option<u64>,
    /// Bytes consumed (0: no number).
    pub len: usize,
}

/// Scans `[+-]` then `0x` hex, `0` octal or decimal digits.
pub fn scan_c_integer(s: &[u8]) -> CInteger {
    let mut i = 0;
    let negative = s.first() == Some(&b'-');
    if matches!(s.first(), Some(b'+' | b'-')) {
        i = 1;
    }
    let (radix, start) =
        if s.len() >= i + 3 && s[i] == b'0' && (s[i + 1] | 0x20) == b'x' && s[i + 2].is_ascii_hexdigit() {
            (16u32, i + 2)
        } else if s.get(i) == Some(&b'0') {
            (8, i)
        } else {
            (10, i)
        };
    let mut j = start;
    let mut magnitude: Option<u64> = Some(0);
    while let Some(d) = s.get(j).and_then(|&c| (c as char).to_digit(radix)) {
        magnitude = magnitude.and_then(|m| m.checked_mul(u64::from(radix))).and_then(|m| m.checked_add(u64::from(d)));
        j += 1;
    }
    if j == start {
        return CInteger { negative, magnitude: None, len: 0 };
    }
    CInteger { negative, magnitude, len: j }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f32_of(s: &str) -> f32 {
        let n = scan_c_float(s.as_bytes());
        assert_eq!(n, s.len(), "{s}");
        f32::from_bits(c_float_to_f32_bits(s.as_bytes()).unwrap())
    }

    #[test]
    fn decimal_and_special() {
        assert_eq!(f32_of("1.5"), 1.5);
        assert_eq!(f32_of(".5"), 0.5);
        assert_eq!(f32_of("1."), 1.0);
        assert_eq!(f32_of("-2e3"), -2000.0);
        assert!(f32_of("inf").is_infinite());
        assert!(f32_of("-Infinity").is_sign_negative());
        assert!(f32_of("NaN").is_nan());
        assert_eq!(f32_of("-nan").to_bits(), 0xffc0_0000);
        assert_eq!(f32_of("nan(123)").to_bits(), 0x7fc0_0000);
        assert_eq!(scan_c_float(b"1e"), 1);
        assert_eq!(scan_c_float(b"e1"), 0);
        assert_eq!(scan_c_float(b"."), 0);
        assert_eq!(scan_c_float(b"0x"), 1);
    }

    #[test]
    fn short_decimals_match_the_general_conversion() {
        let whole = |text: &str| short_decimal_f32(text.as_bytes()).map(|(bits, len)| (bits, len == text.len()));
        for text in
            ["0.5000", "-2.2500", "1.0000", "-0.0000", "0.1235", "123.4567", "9999999", "0.000001", "3.", "7", "-.5"]
        {
            let general = text.parse::<f32>().unwrap().to_bits();
            assert_eq!(whole(text), Some((general, true)), "{text}");
        }
        for i in 0..200_000u32 {
            let text = format!("{}.{:04}", i / 10_000 * 7, i % 10_000);
            assert_eq!(whole(&text), Some((text.parse::<f32>().unwrap().to_bits(), true)), "{text}");
        }
        for long_or_not_short in ["12345678", "1e5", "1.5E-3", "0x10", "1.2.3", "-", ".", "inf", "+1.0"] {
            assert_eq!(short_decimal_f32(long_or_not_short.as_bytes()), None, "{long_or_not_short}");
        }
        // A prefix: the number ends where `strtof` would stop (the caller checks what follows).
        assert_eq!(short_decimal_f32(b"0.5000, 1.0"), Some((0.5f32.to_bits(), 6)));
        assert_eq!(short_decimal_f32(b"-2.5}"), Some(((-2.5f32).to_bits(), 4)));
        assert_eq!(short_decimal_f32(b"1.5abc"), Some((1.5f32.to_bits(), 3)));
    }

    #[test]
    fn hex_floats() {
        assert_eq!(f32_of("0x1p3"), 8.0);
        assert_eq!(f32_of("0x1.8p1"), 3.0);
        assert_eq!(f32_of("0x3f800000"), 1065353216.0);
        assert_eq!(f32_of("0x10"), 16.0);
        assert_eq!(f32_of("0x1p-149").to_bits(), 1);
        assert_eq!(f32_of("0x1p-150").to_bits(), 0, "tie rounds to even (zero)");
        assert_eq!(f32_of("0x1.8p-149").to_bits(), 2, "1.5 ulp rounds to even");
        assert_eq!(f32_of("0x1p128"), f32::INFINITY);
        assert_eq!(f32_of("0x1.fffffffp127"), f32::INFINITY);
        assert_eq!(f32_of("0x1.fffffep127"), f32::MAX);
        assert_eq!(f32_of("0x1.000001p0"), 1.0, "below half an ulp");
        assert_eq!(f32_of("0x1.000003p0").to_bits(), 0x3f80_0002);
        assert_eq!(f32_of("0xffffffffffffffffffff"), 1.2089258e24);
        let d = f64::from_bits(c_float_to_f64_bits(b"0x1.8p-1").unwrap());
        assert_eq!(d, 0.75);
    }

    #[test]
    fn c_integers() {
        let v = scan_c_integer(b"0x1F,");
        assert_eq!((v.negative, v.magnitude, v.len), (false, Some(31), 4));
        assert_eq!(scan_c_integer(b"010").magnitude, Some(8));
        assert_eq!(scan_c_integer(b"-16").magnitude, Some(16));
        assert_eq!(scan_c_integer(b"0").magnitude, Some(0));
        assert_eq!(scan_c_integer(b"0x").len, 1, "reads the 0");
        assert_eq!(scan_c_integer(b"99999999999999999999").magnitude, None);
        assert_eq!(scan_c_integer(b"x").len, 0);
    }
}
