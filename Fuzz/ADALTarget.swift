/// ``CacheGroup/importADAL(_:)``, the migration of ADAL for Python caches, on any bytes.
///
/// Properties: the import throws `.malformedCache` and the group is unchanged, or it succeeds;
/// then importing the same cache again changes nothing (entries are filed under their keys), and
/// the group's export imports again to the same export.
enum ADALTarget {
    static func check(_ input: [UInt8]) {
        let group = FuzzProperty.group()
        try! group.importMSAL(FuzzProperty.occupiedDocument)
        let before = FuzzProperty.export(group)
        do {
            try group.importADAL(input)
        } catch {
            FuzzProperty.requireTyped(error, [.malformedCache], "importADAL")
            FuzzProperty.require(FuzzProperty.export(group) == before, "a failed ADAL import changed the group")
            return
        }
        let exported = FuzzProperty.export(group)
        do {
            try group.importADAL(input)
        } catch {
            FuzzProperty.require(false, "an ADAL cache imported once fails the second time: \(error)")
        }
        FuzzProperty.require(FuzzProperty.export(group) == exported, "importing an ADAL cache twice differs from once")
        let again = FuzzProperty.group()
        do {
            try again.importMSAL(exported)
        } catch {
            FuzzProperty.require(false, "the export after an ADAL import does not import again: \(error)")
        }
        FuzzProperty.require(FuzzProperty.export(again) == exported, "the export after an ADAL import is not a fixed point")
    }
}
