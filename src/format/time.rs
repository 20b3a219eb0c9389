//! Timestamps as pi writes and reads them.

use chrono::{DateTime, NaiveDate, NaiveDateTime, TimeZone, Utc};

/// `new Date(ms).toISOString()`: `YYYY-MM-DDTHH:mm:ss.sssZ`.
pub fn iso_from_millis(ms: i64) -> String {
    match Utc.timestamp_millis_opt(ms).single() {
        Some(t) => t.format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string(),
        None => String::from("1970-01-01T00:00:00.000Z"),
    }
}

/// The file-name form of an ISO timestamp: every `:` and `.` replaced by `-`.
pub fn file_stamp(iso: &str) -> String {
    iso.replace([':', '.'], "-")
}

/// `Date.parse(text)` for the forms pi and JavaScript produce: ISO 8601 date-time strings with
/// `Z`, an offset, or no zone (local time, as JavaScript reads them), and date-only strings
/// (UTC). Anything else is `NaN`, where V8's legacy parser might still find a date.
pub fn parse_date_millis(text: &str) -> f64 {
    if let Ok(t) = DateTime::parse_from_rfc3339(text) {
        return t.timestamp_millis() as f64;
    }
    for format in ["%Y-%m-%dT%H:%M:%S%.fZ", "%Y-%m-%dT%H:%MZ"] {
        if let Ok(t) = NaiveDateTime::parse_from_str(text, format) {
            return t.and_utc().timestamp_millis() as f64;
        }
    }
    for format in ["%Y-%m-%dT%H:%M:%S%.f", "%Y-%m-%dT%H:%M"] {
        if let Ok(t) = NaiveDateTime::parse_from_str(text, format) {
            return match chrono::Local.from_local_datetime(&t).earliest() {
                Some(local) => local.timestamp_millis() as f64,
                None => f64::NAN,
            };
        }
    }
    if let Ok(d) = NaiveDate::parse_from_str(text, "%Y-%m-%d") {
        return d
            .and_hms_opt(0, 0, 0)
            .map_or(f64::NAN, |t| t.and_utc().timestamp_millis() as f64);
    }
    f64::NAN
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iso_round_trip() {
        assert_eq!(
            iso_from_millis(1_763_681_581_544),
            "2025-11-20T23:33:01.544Z"
        );
        assert_eq!(
            parse_date_millis("2025-11-20T23:33:01.544Z"),
            1_763_681_581_544.0
        );
        assert_eq!(
            parse_date_millis("2025-11-20T23:33:01.544+01:00"),
            1_763_677_981_544.0
        );
        assert_eq!(parse_date_millis("2025-11-20"), 1_763_596_800_000.0);
        assert!(parse_date_millis("yesterday").is_nan());
        assert_eq!(
            file_stamp("2026-03-24T14:08:44.123Z"),
            "2026-03-24T14-08-44-123Z"
        );
    }
}
