//! Names of Windows values in the client core data, as Suricata logs them: locale ids
//! ([MS-LCID]) and client builds (Windows NT releases).

/// Locale ids and their language tags ([MS-LCID] 2.2), sorted by id.
const LCIDS: &[(u32, &str)] = &[
    (0x0401, "ar-SA"),
    (0x0402, "bg-BG"),
    (0x0403, "ca-ES"),
    (0x0404, "zh-TW"),
    (0x0405, "cs-CZ"),
    (0x0406, "da-DK"),
    (0x0407, "de-DE"),
    (0x0408, "el-GR"),
    (0x0409, "en-US"),
    (0x040A, "es-ES_tradnl"),
    (0x040B, "fi-FI"),
    (0x040C, "fr-FR"),
    (0x040D, "he-IL"),
    (0x040E, "hu-HU"),
    (0x040F, "is-IS"),
    (0x0410, "it-IT"),
    (0x0411, "ja-JP"),
    (0x0412, "ko-KR"),
    (0x0413, "nl-NL"),
    (0x0414, "nb-NO"),
    (0x0415, "pl-PL"),
    (0x0416, "pt-BR"),
    (0x0417, "rm-CH"),
    (0x0418, "ro-RO"),
    (0x0419, "ru-RU"),
    (0x041A, "hr-HR"),
    (0x041B, "sk-SK"),
    (0x041C, "sq-AL"),
    (0x041D, "sv-SE"),
    (0x041E, "th-TH"),
    (0x041F, "tr-TR"),
    (0x0420, "ur-PK"),
    (0x0421, "id-ID"),
    (0x0422, "uk-UA"),
    (0x0423, "be-BY"),
    (0x0424, "sl-SI"),
    (0x0425, "et-EE"),
    (0x0426, "lv-LV"),
    (0x0427, "lt-LT"),
    (0x0429, "fa-IR"),
    (0x042A, "vi-VN"),
    (0x042B, "hy-AM"),
    (0x042D, "eu-ES"),
    (0x042F, "mk-MK"),
    (0x0436, "af-ZA"),
    (0x0437, "ka-GE"),
    (0x0438, "fo-FO"),
    (0x0439, "hi-IN"),
    (0x043A, "mt-MT"),
    (0x043E, "ms-MY"),
    (0x043F, "kk-KZ"),
    (0x0441, "sw-KE"),
    (0x0445, "bn-IN"),
    (0x0449, "ta-IN"),
    (0x044A, "te-IN"),
    (0x0452, "cy-GB"),
    (0x0456, "gl-ES"),
    (0x0464, "fil-PH"),
    (0x0801, "ar-IQ"),
    (0x0804, "zh-CN"),
    (0x0807, "de-CH"),
    (0x0809, "en-GB"),
    (0x080A, "es-MX"),
    (0x080C, "fr-BE"),
    (0x0810, "it-CH"),
    (0x0813, "nl-BE"),
    (0x0814, "nn-NO"),
    (0x0816, "pt-PT"),
    (0x081D, "sv-FI"),
    (0x083C, "ga-IE"),
    (0x0C01, "ar-EG"),
    (0x0C04, "zh-HK"),
    (0x0C07, "de-AT"),
    (0x0C09, "en-AU"),
    (0x0C0A, "es-ES"),
    (0x0C0C, "fr-CA"),
    (0x1004, "zh-SG"),
    (0x1007, "de-LU"),
    (0x1009, "en-CA"),
    (0x100C, "fr-CH"),
    (0x1409, "en-NZ"),
    (0x1809, "en-IE"),
    (0x1C09, "en-ZA"),
    (0x2C0A, "es-AR"),
    (0x4009, "en-IN"),
    (0x4809, "en-SG"),
];

/// The language tag of a keyboard layout's locale id, if Suricata names it.
pub fn lcid(id: u32) -> Option<&'static str> {
    LCIDS
        .binary_search_by_key(&id, |&(k, _)| k)
        .ok()
        .map(|i| LCIDS[i].1)
}

/// The Windows release of a client build number, with its service pack or release
/// suffix, if Suricata names it.
pub fn build(n: u32) -> Option<&'static str> {
    Some(match n {
        528 => "Windows NT 3.1",
        807 => "Windows NT 3.5",
        1057 => "Windows NT 3.51",
        1381 => "Windows NT 4.0",
        2195 => "Windows 2000",
        2600 => "Windows XP",
        3790 => "Windows Server 2003",
        6000 => "Windows Vista RTM",
        6001 => "Windows Vista SP1",
        6002 => "Windows Vista SP2",
        7600 => "Windows 7 RTM",
        7601 => "Windows 7 SP1",
        9200 => "Windows 8",
        9600 => "Windows 8.1",
        10240 => "Windows 10 TH1",
        10586 => "Windows 10 TH2",
        14393 => "Windows 10 RS1",
        15063 => "Windows 10 RS2",
        16299 => "Windows 10 RS3",
        17134 => "Windows 10 RS4",
        17763 => "Windows 10 RS5",
        _ => return None,
    })
}

/// The client version (RDP 4 to 10.7) as Suricata writes it.
pub fn version(v: u32) -> Option<&'static str> {
    Some(match v {
        0x0008_0001 => "v4",
        0x0008_0004 => "v5",
        0x0008_0005 => "v10.0",
        0x0008_0006 => "v10.1",
        0x0008_0007 => "v10.2",
        0x0008_0008 => "v10.3",
        0x0008_0009 => "v10.4",
        0x0008_000a => "v10.5",
        0x0008_000b => "v10.6",
        0x0008_000c => "v10.7",
        _ => return None,
    })
}

/// Keyboard types (1..=7).
pub fn keyboard(t: u32) -> Option<&'static str> {
    Some(match t {
        1 => "xt",
        2 => "ico",
        3 => "at",
        4 => "enhanced",
        5 => "1050",
        6 => "9140",
        7 => "jp",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables() {
        assert!(LCIDS.windows(2).all(|w| w[0].0 < w[1].0));
        assert_eq!(lcid(0x409), Some("en-US"));
        assert_eq!(lcid(0x12345), None);
        assert_eq!(build(7601), Some("Windows 7 SP1"));
        assert_eq!(build(1), None);
        assert_eq!(version(0x8000c), Some("v10.7"));
        assert_eq!(keyboard(7), Some("jp"));
    }
}
