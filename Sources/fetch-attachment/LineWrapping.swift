import Foundation
import SystemPackage

/// Text for a person laid out for a terminal: a line wider than the terminal is wrapped at its
/// spaces, each continuation indented under the text that follows the line's label
/// (`  warning: `, `    tap opens: `, `line 3: `), or four columns in from a line without one
/// (deeper than the lines nested under it, which are two in). A word is never broken: a URL, a
/// path or another token longer than the room left goes whole onto a continuation line of its
/// own (the label then stands alone on the first), where a terminal's selection takes it as it
/// is, even when it is wider than the terminal. Text written without spaces (Chinese, Japanese)
/// is the exception: a run holding a wide East Asian character, and no `/`, breaks between its
/// characters where it does not fit, never before closing punctuation (`。`, `、`, `」`…), as
/// a line of such text breaks in print.
///
/// A few words that read as one (`51.2 ms`, `(braze, 3.2 ms)`) are joined by `glue` rather than
/// spaces (see `glued(_:)`), so that no line ends inside them; each is a space once laid out.
///
/// Pure: what it lays out is already escaped (`TerminalText`), so holds no line break and no
/// control character of its own: `glue` can only be the program's.
enum LineWrapping {
    /// A space no line breaks at: U+001F (the information separator "unit separator"), which
    /// `TerminalText.escaped` escapes in every text from a payload or an origin, and which
    /// `wrapped` prints as a space.
    static let glue = "\u{1F}"

    /// `words` with their spaces made `glue`: kept on one line, as long as the width allows.
    static func glued(_ words: String) -> String { words.replacingOccurrences(of: " ", with: glue) }

    /// The width text is laid out for when nothing says otherwise.
    static let defaultWidth = 80

    /// The narrowest `COLUMNS` taken: a narrower one would leave no room beside the labels.
    static let minimumWidth = 40

    /// The width text written to `descriptor` is laid out for: `COLUMNS` when the descriptor is
    /// a terminal and the variable holds a width of at least `minimumWidth` (a shell keeps it as
    /// its terminal's width, and a command sees it where it is exported), else `defaultWidth`; a
    /// file or a pipe always gets `defaultWidth`.
    static func width(of descriptor: FileDescriptor) -> Int {
        guard CommandSyscalls.isTerminal(descriptor),
            let columns = ProcessInfo.processInfo.environment["COLUMNS"].flatMap({ Int($0) }),
            columns >= minimumWidth
        else { return defaultWidth }
        return columns
    }

    /// `text` with every line wider than `width` columns wrapped, and every `glue` a space.
    static func wrapped(_ text: String, width: Int) -> String {
        // Every character takes at most as many columns as it has UTF-8 bytes.
        let laidOut =
            text.utf8.count <= width
            ? text
            : text.split(separator: "\n", omittingEmptySubsequences: false)
                .map { wrapped(line: $0, width: width) }
                .joined(separator: "\n")
        return laidOut.contains(glue) ? laidOut.replacingOccurrences(of: glue, with: " ") : laidOut
    }

    /// One line, wrapped to `width` columns as the type's documentation says.
    static func wrapped(line: Substring, width: Int) -> String {
        guard line.utf8.count > width, columns(of: line) > width else { return String(line) }
        let textStart = line.firstIndex { $0 != " " } ?? line.endIndex
        let leading = line.distance(from: line.startIndex, to: textStart)
        // The first line keeps the head (the label, or the leading spaces); continuations start
        // at the indent.
        let head: Substring
        let indent: Int
        if let colon = labelColon(of: line, from: textStart, width: width) {
            head = line[...colon]
            indent = columns(of: head) + 1
        } else {
            head = line[..<textStart]
            indent = min(leading + 4, width / 2)
        }
        let hasLabel = head.endIndex != textStart
        let margin = String(repeating: " ", count: indent)
        var lines: [String] = []
        var current = String(head)
        var used = columns(of: head)
        var wordless = true
        var index = head.endIndex
        while index < line.endIndex {
            let wordStart = line[index...].firstIndex { $0 != " " } ?? line.endIndex
            guard wordStart < line.endIndex else { break }
            let wordEnd = line[wordStart...].firstIndex(of: " ") ?? line.endIndex
            let gap = line.distance(from: index, to: wordStart)
            let word = line[wordStart..<wordEnd]
            let size = columns(of: word)
            if used + gap + size <= width || (wordless && !hasLabel && !breaksBetweenCharacters(word)) {
                current += line[index..<wordEnd]
                used += gap + size
            } else if breaksBetweenCharacters(word) {
                let pieces = Self.pieces(of: word, firstRoom: width - used - gap, room: width - indent)
                if let first = pieces.first, !first.isEmpty {
                    current += line[index..<wordStart] + first
                }
                for piece in pieces.dropFirst() {
                    lines.append(current)
                    current = margin + piece
                }
                used = pieces.count > 1 ? indent + columns(of: pieces[pieces.count - 1]) : used + gap + columns(of: pieces[0])
            } else {
                lines.append(current)
                current = margin + word
                used = indent + size
            }
            wordless = false
            index = wordEnd
        }
        lines.append(current)
        return lines.joined(separator: "\n")
    }

    /// Whether `word` may break between its characters: it holds a wide East Asian character
    /// (not an emoji) and no `/` (a URL or a path stays whole).
    private static func breaksBetweenCharacters(_ word: Substring) -> Bool {
        !word.contains("/") && word.contains { !$0.isASCII && columns(of: $0) == 2 && $0.unicodeScalars.first?.properties.isEmojiPresentation == false }
    }

    /// Closing punctuation no line of East Asian text starts with.
    private static let noLineStart: Set<Character> = [
        "、", "。", "，", "．", "：", "；", "？", "！", "」", "』", "）", "】", "〕", "〉", "》", "〟", "’", "”", "ー", "ぁ", "ぃ", "ぅ", "ぇ",
        "ぉ", "っ", "ゃ", "ゅ", "ょ", "ァ", "ィ", "ゥ", "ェ", "ォ", "ッ", "ャ", "ュ", "ョ", "・", "…", ")", ",", ".", "!", "?", ":", ";", "%",
    ]

    /// `word` cut into pieces: the first within `firstRoom` columns (empty when not even its
    /// first character fits), each other within `room` and holding one character at least (so
    /// that the cutting ends); a cut before `noLineStart` punctuation moves back, leaving the
    /// punctuation with the character before it, as long as the piece keeps one.
    private static func pieces(of word: Substring, firstRoom: Int, room: Int) -> [Substring] {
        var pieces: [Substring] = []
        var start = word.startIndex
        var used = 0
        var limit = firstRoom
        var index = word.startIndex
        while index < word.endIndex {
            let size = columns(of: word[index])
            if used + size > limit, index > start || pieces.isEmpty {
                var cut = index
                while cut > start, noLineStart.contains(word[cut]), word.index(before: cut) > start { cut = word.index(before: cut) }
                pieces.append(word[start..<cut])
                (start, index, used, limit) = (cut, cut, 0, room)
                continue
            }
            used += size
            index = word.index(after: index)
        }
        pieces.append(word[start...])
        return pieces
    }

    /// The colon that ends the label `line` starts with at `start`: its first `": "`, when what
    /// comes before it is a few words rather than a URL or a path (no `/`) and, with the colon
    /// and its space, takes at most half the width.
    private static func labelColon(of line: Substring, from start: Substring.Index, width: Int) -> Substring.Index? {
        guard let separator = line[start...].range(of: ": ") else { return nil }
        let label = line[start..<separator.lowerBound]
        guard !label.isEmpty, !label.contains("/"), columns(of: line[..<separator.upperBound]) <= width / 2 else { return nil }
        return separator.lowerBound
    }

    /// The columns `text` takes on a terminal: a wide East Asian character and an emoji shown as
    /// one take two, a combining mark none (it joins the character before it), others one.
    static func columns(of text: Substring) -> Int {
        var count = 0
        for character in text {
            if character.isASCII {
                count += 1
            } else {
                count += columns(of: character)
            }
        }
        return count
    }

    private static func columns(of character: Character) -> Int {
        guard let first = character.unicodeScalars.first else { return 0 }
        if first.properties.isEmojiPresentation || character.unicodeScalars.contains("\u{FE0F}") { return 2 }
        switch first.value {
        // Hangul Jamo, CJK radicals to Yi, Hangul syllables, CJK compatibility ideographs,
        // vertical and compatibility forms, fullwidth forms, and the supplementary ideographs.
        case 0x1100...0x115F, 0x2E80...0x303E, 0x3041...0x33FF, 0x3400...0x4DBF, 0x4E00...0x9FFF, 0xA000...0xA4CF,
            0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE30...0xFE4F, 0xFF00...0xFF60, 0xFFE0...0xFFE6, 0x20000...0x3FFFD:
            return 2
        default:
            switch first.properties.generalCategory {
            case .nonspacingMark, .enclosingMark, .format: return 0
            default: return 1
            }
        }
    }
}
