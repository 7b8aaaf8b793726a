"""Java's ``Float.toString`` / ``Double.toString`` as JDK 8-17 print them (sun.misc.FloatingDecimal:
BinaryToASCIIBuffer.dtoa + getChars), including their non-shortest outputs such as ``9.1396288E8``: Paimon writes
FLOAT/DOUBLE partition values with them (partition_path.py). JDK 19+ may differ in rare last digits.
"""

from __future__ import annotations

import math
import struct

_N_5_BITS = [0] + [(5**i).bit_length() for i in range(1, 27)]  # bits of 5**i, as FloatingDecimal's table


def _wrap(x: int, bits: int) -> int:
    """Two's complement wrap-around of Java int (32) / long (64) arithmetic."""
    half = 1 << (bits - 1)
    return ((x + half) & ((1 << bits) - 1)) - half


def _jdiv(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def _jmod(a: int, b: int) -> int:
    return a - b * _jdiv(a, b)


def _estimate_dec_exp(fract_bits: int, bin_exp: int) -> int:
    d2 = struct.unpack("<d", struct.pack("<Q", 0x3FF0000000000000 | (fract_bits & 0xFFFFFFFFFFFFF)))[0]
    d = (d2 - 1.5) * 0.289529654 + 0.176091259 + float(bin_exp) * 0.301029995663981
    return math.floor(d)


def _long_digits(dec_exp: int, value: int, insignificant: int) -> tuple[list[int], int]:
    """developLongDigits: an integer's digits (trailing zeros dropped) after rounding off insignificant ones."""
    if insignificant:
        pow10 = 10**insignificant
        value, residue = divmod(value, pow10)
        dec_exp += insignificant
        if residue >= pow10 >> 1:
            value += 1
    text = str(value)
    return [int(c) for c in text.rstrip("0")], dec_exp + len(text)


def _dtoa(bin_exp: int, fract_bits: int, n_sig_bits: int) -> tuple[list[int], int]:
    """Digits and decimal exponent (value = 0.d1d2... * 10**exp) as FloatingDecimal.dtoa produces them.

    fract_bits holds the significand with its leading 1 at bit 52; bin_exp is the unbiased binary exponent;
    n_sig_bits is 53 (double) / 24 (float) for normal numbers, fewer for subnormals.
    """
    tail_zeros = (fract_bits & -fract_bits).bit_length() - 1
    n_fract_bits = 53 - tail_zeros
    n_tiny_bits = max(0, n_fract_bits - bin_exp - 1)
    if -21 <= bin_exp <= 62 and n_tiny_bits == 0:
        # an integer below 2**63: exact long digits, minus the digits beyond the type's precision
        p2 = bin_exp - n_sig_bits - 1
        insignificant = len(str(1 << p2)) - 1 if bin_exp > n_sig_bits and p2 > 1 else 0
        value = fract_bits << (bin_exp - 52) if bin_exp >= 52 else fract_bits >> (52 - bin_exp)
        return _long_digits(0, value, insignificant)

    dec_exp = _estimate_dec_exp(fract_bits, bin_exp)
    b5 = max(0, -dec_exp)
    b2 = b5 + n_tiny_bits + bin_exp
    s5 = max(0, dec_exp)
    s2 = s5 + n_tiny_bits
    m5 = b5
    m2 = b2 - n_sig_bits
    fract_bits >>= tail_zeros
    b2 -= n_fract_bits - 1
    common = min(b2, s2)
    b2 -= common
    s2 -= common
    m2 -= common
    if n_fract_bits == 1:  # exact power of two: the next lower neighbour is only half as far
        m2 -= 1
    if m2 < 0:
        b2 -= m2
        s2 -= m2
        m2 = 0
    b_bits = n_fract_bits + b2 + (_N_5_BITS[b5] if b5 < len(_N_5_BITS) else b5 * 3)
    ten_s_bits = s2 + 1 + (_N_5_BITS[s5 + 1] if s5 + 1 < len(_N_5_BITS) else (s5 + 1) * 3)
    digits: list[int] = []
    if b_bits < 64 and ten_s_bits < 64:
        w = 32 if b_bits < 32 and ten_s_bits < 32 else 64  # Java int / long arithmetic, wrapping
        b = _wrap(_wrap(_wrap(fract_bits, w) * 5**b5, w) << b2, w)
        s = _wrap(5**s5 << s2, w)
        m = _wrap(5**m5 << m2, w)
        tens = _wrap(s * 10, w)
        q = _jdiv(b, s)
        b = _wrap(10 * _jmod(b, s), w)
        m = _wrap(m * 10, w)
        low, high = b < m, _wrap(b + m, w) > tens
        if q == 0 and not high:
            dec_exp -= 1  # the estimate was one too high: drop the leading zero
        else:
            digits.append(q)
        if dec_exp < -3 or dec_exp >= 8:  # E-form needs a digit after the point
            low = high = False
        while not low and not high:
            q = _jdiv(b, s)
            b = _wrap(10 * _jmod(b, s), w)
            m = _wrap(m * 10, w)
            if m > 0:
                low, high = b < m, _wrap(b + m, w) > tens
            else:  # m overflowed
                low = high = True
            digits.append(q)
        low_diff = _wrap(_wrap(b << 1, w) - tens, w)
    else:
        b = fract_bits * 5**b5 << b2
        s = 5**s5 << s2
        m = 5**m5 << m2
        tens = s * 10
        q, b = divmod(b, s)
        b *= 10
        m *= 10
        low, high = b < m, b + m > tens
        if q == 0 and not high:
            dec_exp -= 1
        else:
            digits.append(q)
        if dec_exp < -3 or dec_exp >= 8:
            low = high = False
        while not low and not high:
            q, b = divmod(b, s)
            b *= 10
            m *= 10
            low, high = b < m, b + m > tens
            digits.append(q)
        low_diff = (b << 1) - tens
    dec_exponent = dec_exp + 1
    if high and (not low or low_diff > 0 or (low_diff == 0 and digits[-1] & 1)):
        dec_exponent = _roundup(digits, dec_exponent)
    return digits, dec_exponent


def _roundup(digits: list[int], dec_exponent: int) -> int:
    i = len(digits) - 1
    while digits[i] == 9 and i > 0:
        digits[i] = 0
        i -= 1
    if digits[i] == 9:  # carry out of the first digit: 1 followed by the (zeroed) rest
        digits[0] = 1
        return dec_exponent + 1
    digits[i] += 1
    return dec_exponent


def _java_chars(negative: bool, digits: list[int], dec_exponent: int) -> str:
    """BinaryToASCIIBuffer.getChars: plain for 1e-3 <= |x| < 1e7, else d.dddE[-]n."""
    sign = "-" if negative else ""
    text = "".join(map(str, digits))
    if 0 < dec_exponent < 8:
        whole = text[:dec_exponent]
        if len(whole) < dec_exponent:
            return f"{sign}{whole}{'0' * (dec_exponent - len(whole))}.0"
        return f"{sign}{whole}.{text[dec_exponent:] or '0'}"
    if -3 < dec_exponent <= 0:
        return f"{sign}0.{'0' * -dec_exponent}{text}"
    exp = dec_exponent - 1
    return f"{sign}{text[0]}.{text[1:] or '0'}E{exp}"


def java_double_to_string(value: float) -> str:
    """Double.toString(value) as JDK 8-17 print it (JDK 19+ may differ in rare last digits)."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    bits = struct.unpack("<Q", struct.pack("<d", value))[0]
    negative = bool(bits >> 63)
    raw_exp, fract = (bits >> 52) & 0x7FF, bits & 0xFFFFFFFFFFFFF
    if raw_exp == 0 and fract == 0:
        return "-0.0" if negative else "0.0"
    if raw_exp == 0:  # subnormal: normalise so the leading 1 sits at bit 52
        shift = 53 - fract.bit_length()
        digits, dec_exponent = _dtoa(-1022 - shift, fract << shift, fract.bit_length())
    else:
        digits, dec_exponent = _dtoa(raw_exp - 1023, fract | (1 << 52), 53)
    return _java_chars(negative, digits, dec_exponent)


def java_float_to_string(value: float) -> str:
    """Float.toString((float) value) as JDK 8-17 print it."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    try:
        bits = struct.unpack("<I", struct.pack("<f", value))[0]
    except OverflowError:
        return "Infinity" if value > 0 else "-Infinity"
    negative = bool(bits >> 31)
    raw_exp, fract = (bits >> 23) & 0xFF, bits & 0x7FFFFF
    if raw_exp == 0 and fract == 0:
        return "-0.0" if negative else "0.0"
    if raw_exp == 0:
        shift = 24 - fract.bit_length()
        digits, dec_exponent = _dtoa(-126 - shift, (fract << shift) << 29, fract.bit_length())
    else:
        digits, dec_exponent = _dtoa(raw_exp - 127, (fract | (1 << 23)) << 29, 24)
    return _java_chars(negative, digits, dec_exponent)
