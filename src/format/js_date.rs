//! JavaScript `Date` semantics as pi's listing uses them: `Date.parse` for ISO 8601 strings,
//! `new Date(value)` for whatever a JSON field holds, and `toISOString` for output.
//!
//! pi computes `created`, `modified` and the activity time of messages with these functions, so
//! a listing only sorts like pi's when they agree to the millisecond. V8 also has a "legacy"
//! parser for strings such as `Tue Mar 24 2026` or `2026/03/24`; those are not recognized here
//! (they read as an invalid date). pi itself only ever writes `toISOString()` output.

use chrono::{Local, NaiveDate, NaiveDateTime, NaiveTime, TimeZone};

/// The largest time value a JavaScript `Date` holds (`TimeClip`), in milliseconds.
const MAX_TIME_MS: f64 = 8.64e15;
const MS_PER_DAY: i64 = 86_400_000;

/// A JavaScript time value: milliseconds since the epoch, or an invalid date (`NaN`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct JsDate(Option<i64>);

impl JsDate {
    pub const INVALID: JsDate = JsDate(None);

    /// `new Date(ms)`: `TimeClip` truncates toward zero and rejects values beyond ±8.64e15.
    pub fn from_millis(ms: f64) -> JsDate {
        if !ms.is_finite() || ms.abs() > MAX_TIME_MS {
            return JsDate::INVALID;
        }
        JsDate(Some(ms.trunc() as i64))
    }

    /// `getTime()`: `None` for an invalid date.
    pub fn millis(self) -> Option<i64> {
        self.0
    }

    pub fn is_valid(self) -> bool {
        self.0.is_some()
    }

    /// `toISOString()` (`JSON.stringify` writes `null` for an invalid date instead).
    pub fn to_iso_string(self) -> Option<String> {
        let ms = self.0?;
        let days = ms.div_euclid(MS_PER_DAY);
        let in_day = ms.rem_euclid(MS_PER_DAY);
        let (year, month, day) = civil_from_days(days);
        let year_text = if (0..=9999).contains(&year) {
            format!("{year:04}")
        } else if year < 0 {
            format!("-{:06}", -year)
        } else {
            format!("+{year:06}")
        };
        Some(format!(
            "{year_text}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
            in_day / 3_600_000,
            in_day / 60_000 % 60,
            in_day / 1000 % 60,
            in_day % 1000
        ))
    }
}

/// The result of [`parse_date`]: the time, and whether it was read as local time (a date-time
/// without a zone), which makes it depend on the machine's time zone.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ParsedDate {
    pub date: JsDate,
    pub local: bool,
}

/// `Date.parse(text)` for the ISO 8601 forms V8 accepts: `YYYY`, `YYYY-MM`, `YYYY-MM-DD`
/// (or a signed six-digit year), optionally followed by `T`/`t`/space and `HH:mm`,
/// `HH:mm:ss` or `HH:mm:ss.f…` and a zone `Z`, `±HH:mm` or `±HHmm`. Date-only forms are UTC;
/// date-time forms without a zone are local time, as in JavaScript.
pub fn parse_date(text: &str) -> ParsedDate {
    let invalid = ParsedDate {
        date: JsDate::INVALID,
        local: false,
    };
    let mut cursor = Cursor {
        bytes: text.as_bytes(),
        pos: 0,
    };
    let Some(fields) = read_iso(&mut cursor).or_else(|| read_legacy(text)) else {
        return invalid;
    };
    let days = days_from_civil(fields.year, fields.month, 1) + i64::from(fields.day) - 1;
    let in_day = i64::from(fields.hour) * 3_600_000
        + i64::from(fields.minute) * 60_000
        + i64::from(fields.second) * 1000
        + i64::from(fields.millis);
    let wall_ms = days * MS_PER_DAY + in_day;
    let (utc_ms, local) = match fields.zone {
        Zone::Utc => (wall_ms, false),
        Zone::OffsetMinutes(minutes) => (wall_ms - i64::from(minutes) * 60_000, false),
        Zone::Local => (wall_ms - local_offset_ms(wall_ms), true),
    };
    ParsedDate {
        date: JsDate::from_millis(utc_ms as f64),
        local,
    }
}

/// V8's fallback for strings that are not ISO 8601: the forms `Date.prototype.toString`,
/// `toUTCString` and people write (`Thu Jan 01 2026 10:00:00 GMT+0100 (CET)`,
/// `Thu, 01 Jan 2026 00:00:10 GMT`, `January 5, 2026`, `2026/03/24`, `12/25/2026`,
/// `Mar 24 2026 10:00 PM`). Month names, weekdays, AM/PM, GMT/UTC/Z with an offset, and
/// parenthesized comments are understood; any other word makes the date invalid. Without a
/// zone the time is local.
fn read_legacy(text: &str) -> Option<IsoFields> {
    const MONTHS: [&str; 12] = [
        "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
    ];
    const WEEKDAYS: [&str; 7] = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"];
    let bytes = text.as_bytes();
    let mut pos = 0;
    let mut numbers: Vec<(i64, usize)> = Vec::new(); // value, digit count
    let mut month_name: Option<u32> = None;
    let mut time: Option<(u32, u32, u32, u32)> = None;
    let mut pm: Option<bool> = None;
    let mut zone: Option<i32> = None; // offset minutes when a zone was given
    let number_at = |pos: &mut usize| -> Option<(i64, usize)> {
        let start = *pos;
        while bytes.get(*pos).is_some_and(u8::is_ascii_digit) {
            *pos += 1;
        }
        let digits = &text[start..*pos];
        (!digits.is_empty() && digits.len() <= 9)
            .then(|| (digits.parse().unwrap_or(0), digits.len()))
    };
    while pos < bytes.len() {
        let b = bytes[pos];
        match b {
            b' ' | b'\t' | b',' | b'\n' | b'\r' => pos += 1,
            b'(' => {
                let mut depth = 0;
                while pos < bytes.len() {
                    match bytes[pos] {
                        b'(' => depth += 1,
                        b')' => depth -= 1,
                        _ => {}
                    }
                    pos += 1;
                    if depth == 0 {
                        break;
                    }
                }
            }
            b'0'..=b'9' => {
                let (value, digits) = number_at(&mut pos)?;
                if bytes.get(pos) == Some(&b':') {
                    if time.is_some() {
                        return None;
                    }
                    pos += 1;
                    let (minute, _) = number_at(&mut pos)?;
                    let (mut second, mut millis) = (0, 0);
                    if bytes.get(pos) == Some(&b':') {
                        pos += 1;
                        second = number_at(&mut pos)?.0;
                        if bytes.get(pos) == Some(&b'.') {
                            pos += 1;
                            let (fraction, count) = number_at(&mut pos)?;
                            millis = (fraction as f64 / 10f64.powi(count as i32 - 3)) as i64;
                        }
                    }
                    time = Some((
                        u32::try_from(value).ok()?,
                        minute as u32,
                        second as u32,
                        millis as u32,
                    ));
                } else {
                    numbers.push((value, digits));
                    if numbers.len() > 3 {
                        return None;
                    }
                }
            }
            b'+' | b'-'
                if zone.is_some()
                    || (time.is_some()
                        && bytes.get(pos + 1).is_some_and(u8::is_ascii_digit)
                        && numbers.len() >= 2) =>
            {
                let sign = if b == b'-' { -1 } else { 1 };
                pos += 1;
                let (value, digits) = number_at(&mut pos)?;
                let minutes = if digits <= 2 {
                    let hours = value;
                    let mut minutes = 0;
                    if bytes.get(pos) == Some(&b':') {
                        pos += 1;
                        minutes = number_at(&mut pos)?.0;
                    }
                    hours * 60 + minutes
                } else {
                    (value / 100) * 60 + value % 100
                };
                zone = Some(sign * minutes as i32);
            }
            b'-' | b'/' | b'.' => pos += 1,
            b if b.is_ascii_alphabetic() => {
                let start = pos;
                while bytes.get(pos).is_some_and(u8::is_ascii_alphabetic) {
                    pos += 1;
                }
                let word = text[start..pos].to_ascii_lowercase();
                if word.len() >= 3
                    && let Some(m) = MONTHS.iter().position(|m| word.starts_with(m))
                {
                    month_name = Some(m as u32 + 1);
                } else if word.len() >= 3 && WEEKDAYS.iter().any(|d| word.starts_with(d)) {
                } else if word == "am" || word == "pm" {
                    pm = Some(word == "pm");
                } else if matches!(word.as_str(), "gmt" | "utc" | "ut" | "z") {
                    zone = Some(zone.unwrap_or(0));
                } else {
                    return None;
                }
            }
            _ => return None,
        }
    }
    let year_of = |(value, digits): (i64, usize)| match (value, digits) {
        (v, d) if d <= 2 && v < 50 => v + 2000,
        (v, d) if d <= 2 && v < 100 => v + 1900,
        (v, _) => v,
    };
    let looks_like_year = |(value, digits): (i64, usize)| digits >= 3 || value > 31;
    let (year, month, day) = match (month_name, numbers.as_slice()) {
        (Some(m), [a, b]) if looks_like_year(*a) => (year_of(*a), m, b.0),
        (Some(m), [a, b]) => (year_of(*b), m, a.0),
        (None, [a, b, c]) if looks_like_year(*a) => (year_of(*a), b.0 as u32, c.0),
        (None, [a, b, c]) => (year_of(*c), a.0 as u32, b.0),
        _ => return None,
    };
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) {
        return None;
    }
    let (mut hour, minute, second, millis) = time.unwrap_or((0, 0, 0, 0));
    match pm {
        Some(is_pm) if (1..=12).contains(&hour) => hour = hour % 12 + if is_pm { 12 } else { 0 },
        Some(_) => return None,
        None if hour > 24 => return None,
        None => {}
    }
    if minute > 59 || second > 59 {
        return None;
    }
    Some(IsoFields {
        year,
        month,
        day: day as u32,
        hour,
        minute,
        second,
        millis,
        zone: zone.map_or(Zone::Local, Zone::OffsetMinutes),
    })
}

struct IsoFields {
    year: i64,
    month: u32,
    day: u32,
    hour: u32,
    minute: u32,
    second: u32,
    millis: u32,
    zone: Zone,
}

enum Zone {
    Utc,
    Local,
    OffsetMinutes(i32),
}

struct Cursor<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl Cursor<'_> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    fn eat(&mut self, byte: u8) -> bool {
        if self.peek() == Some(byte) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    /// Exactly `count` ASCII digits as a number.
    fn digits(&mut self, count: usize) -> Option<u32> {
        let slice = self.bytes.get(self.pos..self.pos + count)?;
        let mut value = 0u32;
        for &b in slice {
            if !b.is_ascii_digit() {
                return None;
            }
            value = value * 10 + u32::from(b - b'0');
        }
        self.pos += count;
        Some(value)
    }

    fn at_end(&self) -> bool {
        self.pos == self.bytes.len()
    }
}

fn read_iso(c: &mut Cursor<'_>) -> Option<IsoFields> {
    let year = match c.peek()? {
        sign @ (b'+' | b'-') => {
            c.pos += 1;
            let magnitude = i64::from(c.digits(6)?);
            if sign == b'-' {
                // ECMAScript forbids "-000000" (there is no negative zero year).
                if magnitude == 0 {
                    return None;
                }
                -magnitude
            } else {
                magnitude
            }
        }
        _ => i64::from(c.digits(4)?),
    };
    let mut fields = IsoFields {
        year,
        month: 1,
        day: 1,
        hour: 0,
        minute: 0,
        second: 0,
        millis: 0,
        zone: Zone::Utc,
    };
    if c.eat(b'-') {
        fields.month = c.digits(2).filter(|m| (1..=12).contains(m))?;
        if c.eat(b'-') {
            // V8 accepts any day 1..31 and lets it overflow into the next month (Feb 30).
            fields.day = c.digits(2).filter(|d| (1..=31).contains(d))?;
        }
    }
    match c.peek() {
        None => return Some(fields),
        Some(b'Z' | b'z') => {
            c.pos += 1;
            return c.at_end().then_some(fields);
        }
        Some(b'T' | b't' | b' ') => c.pos += 1,
        Some(_) => return None,
    }
    fields.hour = c.digits(2).filter(|h| *h <= 24)?;
    if !c.eat(b':') {
        return None;
    }
    fields.minute = c.digits(2).filter(|m| *m <= 59)?;
    let mut fraction_is_zero = true;
    if c.eat(b':') {
        fields.second = c.digits(2).filter(|s| *s <= 59)?;
        if c.eat(b'.') {
            let start = c.pos;
            while c.peek().is_some_and(|b| b.is_ascii_digit()) {
                c.pos += 1;
            }
            let digits = &c.bytes[start..c.pos];
            if digits.is_empty() {
                return None;
            }
            // Milliseconds are the first three digits; further digits are truncated.
            let mut millis = 0;
            for i in 0..3 {
                millis = millis * 10 + digits.get(i).map_or(0, |d| u32::from(d - b'0'));
            }
            fields.millis = millis;
            fraction_is_zero = digits.iter().all(|&d| d == b'0');
        }
    }
    if fields.hour == 24 && (fields.minute != 0 || fields.second != 0 || !fraction_is_zero) {
        return None;
    }
    fields.zone = match c.peek() {
        None => Zone::Local,
        Some(b'Z' | b'z') => {
            c.pos += 1;
            Zone::Utc
        }
        Some(sign @ (b'+' | b'-')) => {
            c.pos += 1;
            let hours = c.digits(2).filter(|h| *h <= 23)?;
            c.eat(b':');
            let minutes = c.digits(2).filter(|m| *m <= 59)?;
            let total = (hours * 60 + minutes) as i32;
            Zone::OffsetMinutes(if sign == b'-' { -total } else { total })
        }
        Some(_) => return None,
    };
    c.at_end().then_some(fields)
}

/// The machine's UTC offset for a local wall-clock time, as JavaScript applies it to zone-less
/// date-times. Outside chrono's range (years beyond ±262,143) no offset is applied.
fn local_offset_ms(wall_ms: i64) -> i64 {
    let days = wall_ms.div_euclid(MS_PER_DAY);
    let in_day = wall_ms.rem_euclid(MS_PER_DAY);
    let (y, m, d) = civil_from_days(days);
    let Some(date) = i32::try_from(y)
        .ok()
        .and_then(|y| NaiveDate::from_ymd_opt(y, m, d))
    else {
        return 0;
    };
    let Some(time) = NaiveTime::from_num_seconds_from_midnight_opt((in_day / 1000) as u32, 0)
    else {
        return 0;
    };
    let wall = NaiveDateTime::new(date, time);
    match Local.offset_from_local_datetime(&wall).earliest() {
        Some(offset) => i64::from(offset.local_minus_utc()) * 1000,
        // A wall time skipped by a DST change: use the offset in force just after it.
        None => i64::from(Local.offset_from_utc_datetime(&wall).local_minus_utc()) * 1000,
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (month 1..=12).
fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let year_of_era = y - era * 400;
    let month_from_march = i64::from((month + 9) % 12);
    let day_of_year = (153 * month_from_march + 2) / 5 + i64::from(day) - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

/// The date of a day count since 1970-01-01.
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z - era * 146_097;
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_from_march = (5 * day_of_year + 2) / 153;
    let day = (day_of_year - (153 * month_from_march + 2) / 5 + 1) as u32;
    let month = if month_from_march < 10 {
        month_from_march + 3
    } else {
        month_from_march - 9
    } as u32;
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn utc(text: &str) -> Option<i64> {
        let parsed = parse_date(text);
        assert!(!parsed.local, "{text} must not be local time");
        parsed.date.millis()
    }

    // Expected values were produced by Node 20 (`Date.parse`).
    #[test]
    fn iso_forms_parse_as_v8_parses_them() {
        for (text, ms) in [
            ("2026-03-24T14:08:44.123Z", Some(1774361324123)),
            ("2026-03-24T14:08:44Z", Some(1774361324000)),
            ("2026-03-24", Some(1774310400000)),
            ("2026-03", Some(1772323200000)),
            ("2026", Some(1767225600000)),
            ("2026Z", Some(1767225600000)),
            ("2026-03-24Z", Some(1774310400000)),
            ("2026-03-24T14:08:44.123456Z", Some(1774361324123)),
            ("2026-03-24 14:08:44Z", Some(1774361324000)),
            ("2026-03-24t14:08:44z", Some(1774361324000)),
            ("+002026-03-24T00:00:00Z", Some(1774310400000)),
            ("-000001-01-01T00:00:00Z", Some(-62198755200000)),
            ("2026-03-24T14:08:44+01:00", Some(1774357724000)),
            ("2026-03-24T14:08:44+0100", Some(1774357724000)),
            ("2026-03-24T14:08:44-0130", Some(1774366724000)),
            ("2026-03-24T24:00:00Z", Some(1774396800000)),
            ("2026-02-30T00:00:00Z", Some(1772409600000)),
            ("2026-03-24T23:59:59.9999Z", Some(1774396799999)),
            ("0000-01-01T00:00:00Z", Some(-62167219200000)),
            ("+275760-09-13T00:00:00.000Z", Some(8640000000000000)),
            ("-271821-04-20T00:00:00.000Z", Some(-8640000000000000)),
            ("+275760-09-13T00:00:00.001Z", None),
            ("2026-13-01", None),
            (" 2026-03-24T14:08:44.123Z", None),
            ("2026-03-24T14:08:44.123Z ", None),
            ("2026-03-24T14:08:60Z", None),
            ("20260324", None),
            ("2026-03-24T14:08:44.Z", None),
            ("2026-03-24T14Z", None),
            ("2026-03-24T24:01:00Z", None),
            ("2026-03-24T24:00:00.0001Z", None),
            ("2026-03-24T14:08:44.123+01", None),
            ("2026-03-24T14:08:44+24:00", None),
            ("2026-03-24+01:00", None),
            ("-000000-01-01T00:00:00Z", None),
            ("2026-04-32T00:00:00Z", None),
            ("", None),
            ("yesterday", None),
        ] {
            assert_eq!(utc(text), ms, "{text}");
        }
    }

    #[test]
    fn zone_less_date_times_are_local() {
        let parsed = parse_date("2026-03-24T14:08:44.123");
        assert!(parsed.local);
        assert!(parsed.date.is_valid());
    }

    #[test]
    fn time_clip_and_iso_output() {
        assert_eq!(JsDate::from_millis(1.999).millis(), Some(1));
        assert_eq!(JsDate::from_millis(-0.5).millis(), Some(0));
        assert_eq!(JsDate::from_millis(8.64e15 + 1.0).millis(), None);
        assert_eq!(JsDate::from_millis(f64::INFINITY).millis(), None);
        for (ms, iso) in [
            (0i64, "1970-01-01T00:00:00.000Z"),
            (1774361324123, "2026-03-24T14:08:44.123Z"),
            (-62198755200000, "-000001-01-01T00:00:00.000Z"),
            (253402300800000, "+010000-01-01T00:00:00.000Z"),
            (8640000000000000, "+275760-09-13T00:00:00.000Z"),
            (-1, "1969-12-31T23:59:59.999Z"),
        ] {
            assert_eq!(
                JsDate::from_millis(ms as f64).to_iso_string().as_deref(),
                Some(iso)
            );
        }
        assert_eq!(JsDate::INVALID.to_iso_string(), None);
    }
}

#[cfg(test)]
mod legacy_tests {
    use super::*;

    /// Expected values from Node 20 (`Date.parse`), for strings with a zone (so they do not
    /// depend on the machine's time zone).
    #[test]
    fn legacy_forms_parse_as_v8_parses_them() {
        let cases: [(&str, Option<i64>); 10] = [
            ("Jan 1 2026 00:00:00 GMT", Some(1_767_225_600_000)),
            ("Thu Jan 01 2026 00:00:00 GMT+0000", Some(1_767_225_600_000)),
            ("Thu, 01 Jan 2026 00:00:10 GMT", Some(1_767_225_610_000)),
            (
                "Thu Jan 01 2026 10:00:00 GMT+0130 (Coordinated Universal Time)",
                Some(1_767_256_200_000),
            ),
            ("2026-02-30T00:00:00Z", Some(1_772_409_600_000)),
            ("2026-01-01T24:00:00Z", Some(1_767_312_000_000)),
            (" 2026-01-01T00:00:00Z", None),
            ("Sun, 32 Jan 2026 00:00:00 GMT", None),
            ("2026-01-01T24:00:01Z", None),
            ("foo", None),
        ];
        for (text, expected) in cases {
            assert_eq!(parse_date(text).date.millis(), expected, "{text:?}");
        }
    }

    #[test]
    fn legacy_forms_without_a_zone_are_local_time() {
        let local = |y: i64, m: u32, d: u32, h: i64| {
            let wall = (days_from_civil(y, m, d)) * MS_PER_DAY + h * 3_600_000;
            Some(wall - local_offset_ms(wall))
        };
        assert_eq!(
            parse_date("January 5, 2026").date.millis(),
            local(2026, 1, 5, 0)
        );
        assert_eq!(
            parse_date("2026/03/24").date.millis(),
            local(2026, 3, 24, 0)
        );
        assert_eq!(parse_date("2026-3-4").date.millis(), local(2026, 3, 4, 0));
        assert_eq!(
            parse_date("12/25/2026").date.millis(),
            local(2026, 12, 25, 0)
        );
        assert_eq!(
            parse_date("Mar 24 2026 10:00 PM").date.millis(),
            local(2026, 3, 24, 22)
        );
        assert_eq!(parse_date("1 Jan 2026").date.millis(), local(2026, 1, 1, 0));
    }
}
