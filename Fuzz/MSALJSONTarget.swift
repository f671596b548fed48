/// `CacheGroup.importMSAL` on any bytes.
///
/// Property: the import succeeds, and then export → import → export is a fixed point (and an
/// input that is itself an export, byte for byte what the writer produces, comes back
/// byte-identical); or it throws `.malformedCache` and the group is unchanged. Checked on an
/// empty group and on one that already holds entries.
enum MSALJSONTarget {
    static func check(_ input: [UInt8]) {
        for occupied in [false, true] {
            let group = FuzzProperty.group()
            if occupied { try! group.importMSAL(FuzzProperty.occupiedDocument) }
            let before = FuzzProperty.export(group)
            do {
                try group.importMSAL(input)
            } catch {
                FuzzProperty.requireTyped(error, [.malformedCache], "importMSAL")
                FuzzProperty.require(FuzzProperty.export(group) == before, "a failed import changed the group")
                continue
            }
            let exported = FuzzProperty.export(group)
            let again = FuzzProperty.group()
            do {
                try again.importMSAL(exported)
            } catch {
                FuzzProperty.require(false, "an export does not import again: \(error)")
            }
            FuzzProperty.require(FuzzProperty.export(again) == exported, "export → import → export is not a fixed point")
            if !occupied, isExport(input) {
                FuzzProperty.require(exported == input, "an export imported into an empty group exports differently")
            }
        }
    }

    /// Whether `input` is shaped as an export: a document of known and unknown sections, each
    /// known one once, written exactly as the writer writes its value (which also rules out a
    /// repeated key anywhere, since parsing keeps one member per key).
    static func isExport(_ input: [UInt8]) -> Bool {
        guard case .object(let document)? = try? JSONParser.parse(input),
            JSONWriter.bytes(.object(document), style: .python) == input
        else { return false }
        var kinds = Set<CredentialKind>()
        for (name, _) in document {
            if let kind = CredentialKind(sectionName: name), !kinds.insert(kind).inserted { return false }
        }
        return true
    }
}
