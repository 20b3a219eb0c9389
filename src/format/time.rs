//! Timestamps as pi writes and reads them.

use chrono::{TimeZone, Utc};

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

/// `Date.parse(text)` in milliseconds, NaN for an invalid date.
pub fn parse_date_millis(text: &str) -> f64 {
    super::js_date::parse_date(text)
        .date
        .millis()
        .map_or(f64::NAN, |ms| ms as f64)
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
